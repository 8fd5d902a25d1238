import type { PageExpectation } from '@courtier/adapter-kit';

const heading = (name: string) => ({ role: 'heading', name });
const textbox = (name: string) => ({ role: 'textbox', name });
const combobox = (name: string) => ({ role: 'combobox', name });
const button = (name: string) => ({ role: 'button', name });

export const HEADINGS = {
  login: 'Connexion à l’espace partenaires',
  approval: 'Validation de la connexion',
  home: 'Tableau de bord',
  offers: 'Nos formules',
} as const;

/**
 * What each step of the Horizon robot expects of the screen the app draws: its address (the app's
 * pushState path) and what a person sees there. A redesign fails the step that meets it as
 * portal_changed, before anything is typed.
 */
export const PAGES = {
  login: {
    step: 'login',
    path: /\/app\/connexion$/,
    landmarks: [heading(HEADINGS.login), textbox('Identifiant'), button('Se connecter')],
  },
  approval: {
    step: 'app approval',
    path: /\/app\/validation$/,
    landmarks: [heading(HEADINGS.approval), button('Envoyer la demande')],
  },
  home: {
    step: 'home',
    path: /\/app\/accueil$/,
    landmarks: [heading(HEADINGS.home), button('Nouveau devis auto'), button('Nouveau devis habitation')],
  },
  carDriver: {
    step: 'driver',
    path: /\/app\/devis\/[0-9a-f]+\/conducteur$/,
    landmarks: [
      heading('Devis auto – Conducteur principal'),
      textbox('Prénom'),
      textbox('Nom'),
      textbox('Date de naissance du conducteur'),
      textbox('Année d’obtention du permis'),
      textbox('Coefficient bonus-malus (CRM)'),
      textbox('Sinistres sur 36 mois'),
      textbox('Code postal du garage'),
      button('Continuer'),
    ],
  },
  carVehicle: {
    step: 'vehicle',
    path: /\/app\/devis\/[0-9a-f]+\/vehicule$/,
    landmarks: [
      heading('Devis auto – Véhicule'),
      textbox('Marque'),
      textbox('Modèle'),
      textbox('Date de mise en circulation'),
      combobox('Kilométrage annuel'),
      combobox('Stationnement la nuit'),
      button('Voir les tarifs'),
    ],
  },
  homeProperty: {
    step: 'property',
    path: /\/app\/devis\/[0-9a-f]+\/bien$/,
    landmarks: [
      heading('Devis habitation – Le bien à assurer'),
      textbox('Prénom'),
      textbox('Nom'),
      combobox('Type de bien'),
      combobox('Vous êtes'),
      textbox('Code postal du bien'),
      button('Continuer'),
    ],
  },
  homeRooms: {
    step: 'rooms',
    path: /\/app\/devis\/[0-9a-f]+\/pieces$/,
    landmarks: [
      heading('Devis habitation – Pièces et contenu'),
      textbox('Surface habitable (m²)'),
      textbox('Nombre de pièces principales'),
      textbox('Étage (appartement)'),
      textbox('Valeur du mobilier (€)'),
      { role: 'checkbox', name: 'Alarme anti-intrusion' },
      button('Voir les tarifs'),
    ],
  },
  offers: {
    step: 'offers',
    path: /\/app\/devis\/[0-9a-f]+\/formule$/,
    landmarks: [heading(HEADINGS.offers)],
  },
  documents: {
    step: 'documents',
    path: /\/app\/devis\/[0-9a-f]+\/documents$/,
    landmarks: [],
  },
} as const satisfies Record<string, PageExpectation>;
