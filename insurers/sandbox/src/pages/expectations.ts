import type { PageExpectation } from '@courtier/adapter-kit';
import { HEADINGS } from '../page-driver.js';

const heading = (name: string) => ({ role: 'heading', name });
const textbox = (name: string) => ({ role: 'textbox', name });
const button = (name: string) => ({ role: 'button', name });

/**
 * What each step of the sandbox robot expects of its page: the address and what a person sees there
 * (the heading, the fields and buttons the robot uses). A portal redesign fails the step that meets it
 * as portal_changed, before anything is typed.
 */
export const PAGES = {
  login: {
    step: 'login',
    path: /\/login$/,
    landmarks: [heading(HEADINGS.login), textbox('Identifiant courtier'), textbox('Mot de passe'), button('Se connecter')],
  },
  mfa: {
    step: 'two-step verification',
    path: /\/mfa$/,
    landmarks: [heading(HEADINGS.mfa), textbox('Code reçu par SMS'), button('Valider')],
  },
  autoDriver: {
    step: 'driver',
    path: /\/devis\/auto\/conducteur$/,
    landmarks: [
      heading(HEADINGS.autoDriver),
      textbox('Nom de l’assuré'),
      textbox('Date de naissance du conducteur'),
      textbox('Date d’obtention du permis'),
      textbox('Coefficient bonus-malus'),
      textbox('Code postal'),
      button('Continuer'),
    ],
  },
  autoVehicle: {
    step: 'vehicle',
    path: /\/devis\/auto\/vehicule$/,
    landmarks: [
      heading(HEADINGS.autoVehicle),
      textbox('Marque'),
      textbox('Modèle'),
      textbox('Immatriculation'),
      textbox('Date de première mise en circulation'),
      { role: 'combobox', name: 'Usage' },
      button('Continuer'),
    ],
  },
  autoFormula: {
    step: 'formula',
    path: /\/devis\/auto\/formule$/,
    landmarks: [
      heading(HEADINGS.autoFormula),
      { role: 'radio', name: 'Tiers' },
      { role: 'radio', name: 'Tiers étendu' },
      { role: 'radio', name: 'Tous risques' },
      button('Calculer le tarif'),
    ],
  },
  homeDwelling: {
    step: 'dwelling',
    path: /\/devis\/habitation\/logement$/,
    landmarks: [
      heading(HEADINGS.homeDwelling),
      textbox('Nom de l’assuré'),
      { role: 'combobox', name: 'Type de logement' },
      textbox('Surface (m²)'),
      textbox('Nombre de pièces'),
      textbox('Code postal'),
      button('Continuer'),
    ],
  },
  homeOccupation: {
    step: 'occupation',
    path: /\/devis\/habitation\/occupation$/,
    landmarks: [
      heading(HEADINGS.homeOccupation),
      { role: 'combobox', name: 'Statut de l’occupant' },
      textbox('Capital mobilier (€)'),
      button('Calculer le tarif'),
    ],
  },
  result: { step: 'result', landmarks: [heading(HEADINGS.result), { role: 'link', name: 'Télécharger le devis (PDF)' }] },
  attestationForm: {
    step: 'attestation form',
    path: /\/attestation$/,
    landmarks: [heading(HEADINGS.attestationForm), textbox('Numéro de contrat'), button('Obtenir l’attestation')],
  },
  attestation: {
    step: 'attestation',
    landmarks: [heading(HEADINGS.attestation), { role: 'link', name: 'Télécharger l’attestation (PDF)' }],
  },
} as const satisfies Record<string, PageExpectation>;
