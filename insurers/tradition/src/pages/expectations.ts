import type { PageExpectation } from '@courtier/adapter-kit';
import { TEXTS } from '../driver.js';

const heading = (name: string) => ({ role: 'heading', name });
const textbox = (name: string) => ({ role: 'textbox', name });
const combobox = (name: string) => ({ role: 'combobox', name });
const radio = (name: string) => ({ role: 'radio', name });
const button = (name: string) => ({ role: 'button', name });
const NEXT = button('Suivant >>');
const PRICE = button('Tarifer');
const DRAFT = /\/devis\/T\d{8}$/;

/**
 * What each step of the Tradition robot expects of its page (the window's, or the main frame's):
 * the address and the landmarks a person sees. The redesign fails the step that meets it as
 * portal_changed, naming it, before anything is typed.
 */
export const PAGES = {
  login: {
    step: 'login',
    path: /\/login$/,
    landmarks: [heading(TEXTS.login), textbox('Code partenaire'), textbox('Mot de passe'), button('Connexion')],
  },
  captcha: {
    step: 'security check',
    path: /\/(login|controle)$/,
    landmarks: [heading(TEXTS.captcha), { role: 'img', name: 'Code de sécurité' }, textbox('Code de sécurité'), button('Valider')],
  },
  home: { step: 'home', path: /\/accueil$/, landmarks: [heading(TEXTS.home)] },
  automobile: [
    {
      step: 'souscripteur',
      path: DRAFT,
      landmarks: [
        heading('Devis Automobile — Étape 1/3 — Souscripteur'),
        textbox('Nom du souscripteur'),
        textbox('Date de naissance'),
        textbox('Date du permis'),
        textbox('CRM'),
        textbox('Code postal du risque'),
        NEXT,
      ],
    },
    {
      step: 'vehicule',
      path: DRAFT,
      landmarks: [
        heading('Devis Automobile — Étape 2/3 — Véhicule'),
        textbox('Marque'),
        textbox('Modèle'),
        textbox('Puissance fiscale (CV)'),
        textbox('Date de mise en circulation'),
        combobox('Usage'),
        NEXT,
      ],
    },
    {
      step: 'garanties',
      path: DRAFT,
      landmarks: [
        heading('Devis Automobile — Étape 3/3 — Garanties'),
        radio('Responsabilité civile'),
        radio('RC + vol et incendie'),
        radio('Tous risques'),
        PRICE,
      ],
    },
  ],
  habitation: [
    {
      step: 'risque',
      path: DRAFT,
      landmarks: [
        heading('Devis Habitation — Étape 1/2 — Risque'),
        textbox('Nom du souscripteur'),
        textbox('Code postal du risque'),
        combobox('Type d’habitation'),
        combobox('Qualité'),
        NEXT,
      ],
    },
    {
      step: 'biens',
      path: DRAFT,
      landmarks: [
        heading('Devis Habitation — Étape 2/2 — Biens'),
        textbox('Nombre de pièces'),
        textbox('Surface (m²)'),
        textbox('Capital mobilier (€)'),
        radio('Oui'),
        radio('Non'),
        PRICE,
      ],
    },
  ],
  rc_pro: [
    {
      step: 'entreprise',
      path: DRAFT,
      landmarks: [
        heading('Devis RC Professionnelle — Étape 1/2 — Entreprise'),
        textbox('Raison sociale'),
        combobox('Code activité (NAF)'),
        textbox('Année de création'),
        NEXT,
      ],
    },
    {
      step: 'activite',
      path: DRAFT,
      landmarks: [
        heading('Devis RC Professionnelle — Étape 2/2 — Activité'),
        textbox('Chiffre d’affaires annuel (€)'),
        textbox('Effectif salarié'),
        textbox('Sinistres sur 3 ans'),
        PRICE,
      ],
    },
  ],
  quote: { step: 'quote', path: DRAFT, landmarks: [heading(TEXTS.quote)] },
} as const satisfies Record<string, PageExpectation | readonly PageExpectation[]>;
