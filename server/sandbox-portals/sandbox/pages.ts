import { definitionList, escapeHtml, form, layout, textField } from './html.js';

/** The page renderers of the sandbox portal; `base` is the plugin's prefix ("/sandbox/insurer"). */

const LOGIN_HEADING = 'Espace courtier – Sandbox Assurances';
const MFA_HEADING = 'Vérification en deux étapes';
const HOME_HEADING = 'Accueil';
const UNAVAILABLE_HEADING = 'Service momentanément indisponible';
const ATTESTATION_HEADING = 'Attestation d’assurance';
const ATTESTATION_FORM_HEADING = 'Demande d’attestation';

export const MESSAGES = {
  badCredentials: 'Identifiant ou mot de passe incorrect.',
  expired: 'Votre session a expiré. Reconnectez-vous.',
  tooManyTries: 'Trop d’essais. Reconnectez-vous.',
  codeExpired: 'Le code a expiré. Reconnectez-vous.',
  wrongCode: (left: number) => `Code incorrect. Il vous reste ${left} essai(s).`,
  policyNotFound: 'Contrat introuvable.',
  codeSent: 'Un code à 6 chiffres a été envoyé au 06 •• •• •• 42.',
} as const;

export function loginPage(base: string, alert: string | null, brokerId = ''): string {
  return layout({
    base,
    heading: LOGIN_HEADING,
    alert,
    body: form(
      `${base}/login`,
      textField({
        id: 'broker_id',
        label: 'Identifiant courtier',
        value: brokerId,
        autocomplete: 'username',
        invalid: alert === MESSAGES.badCredentials,
      }) +
        textField({
          id: 'password',
          label: 'Mot de passe',
          type: 'password',
          autocomplete: 'current-password',
          invalid: alert === MESSAGES.badCredentials,
        }),
      'Se connecter',
    ),
  });
}

export function mfaPage(base: string, alert: string | null): string {
  return layout({
    base,
    heading: MFA_HEADING,
    alert,
    body:
      `<p role="status" id="code-hint">${escapeHtml(MESSAGES.codeSent)}</p>` +
      form(
        `${base}/mfa`,
        `<div><label for="code">Code reçu par SMS</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" aria-required="true" aria-describedby="code-hint"${
          alert ? ' aria-invalid="true"' : ''
        }></div>`,
        'Valider',
      ),
  });
}

export function homePage(base: string, user: string): string {
  return layout({
    base,
    heading: HOME_HEADING,
    loggedIn: true,
    body: `<p>Bienvenue, ${escapeHtml(user)}.</p>
<nav aria-label="Services"><ul>
<li><a href="${base}/devis/auto">Nouveau devis auto</a></li>
<li><a href="${base}/devis/habitation">Nouveau devis habitation</a></li>
<li><a href="${base}/attestation">Attestation d’assurance</a></li>
</ul></nav>`,
  });
}

export function unavailablePage(base: string): string {
  return layout({
    base,
    heading: UNAVAILABLE_HEADING,
    body: '<p>Notre extranet est en maintenance ou surchargé. Merci de réessayer dans quelques minutes.</p>',
  });
}

export function notFoundPage(base: string, loggedIn: boolean, heading = 'Page introuvable'): string {
  return layout({ base, heading, loggedIn, body: `<p><a href="${base}/">Retour à l’accueil</a></p>` });
}

export function attestationFormPage(base: string, policyNumber: string, alert: string | null): string {
  return layout({
    base,
    heading: ATTESTATION_FORM_HEADING,
    alert,
    loggedIn: true,
    body: form(
      `${base}/attestation`,
      textField({
        id: 'policy_number',
        label: 'Numéro de contrat',
        value: policyNumber,
        hint: 'Par exemple SBX-123456.',
        invalid: alert !== null,
      }),
      'Obtenir l’attestation',
    ),
  });
}

export function attestationPage(base: string, policyNumber: string, validFrom: string, validTo: string): string {
  return layout({
    base,
    heading: ATTESTATION_HEADING,
    loggedIn: true,
    body:
      definitionList([
        { id: 'att-policy', term: 'Numéro de contrat', value: policyNumber },
        { id: 'att-validity', term: 'Période de validité', value: `du ${validFrom} au ${validTo}` },
      ]) +
      `<p><a href="${base}/attestation/${encodeURIComponent(policyNumber)}/pdf">Télécharger l’attestation (PDF)</a></p>` +
      `<p><a href="${base}/accueil">Retour à l’accueil</a></p>`,
  });
}

export interface SmsView {
  to: string;
  code: string;
  sentAtMs: number;
}

export function phonePage(base: string, messages: readonly SmsView[]): string {
  const items = messages
    .map(
      (m) =>
        `<li><p>À ${escapeHtml(m.to)}, le ${escapeHtml(new Date(m.sentAtMs).toLocaleString('fr-FR', { timeZone: 'Europe/Paris' }))}</p><p>Sandbox Assurances : votre code de connexion est <strong>${escapeHtml(
          m.code,
        )}</strong>. Il expire dans 5 minutes.</p></li>`,
    )
    .join('');
  return layout({
    base,
    heading: 'Téléphone de démonstration',
    body: `<p>Les SMS envoyés par le portail sandbox, du plus récent au plus ancien (<a href="${base}/phone?format=json">JSON</a>).</p>${
      items ? `<ol>${items}</ol>` : '<p>Aucun SMS reçu.</p>'
    }`,
  });
}
