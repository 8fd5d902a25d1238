import { formatEuros } from '../sandbox/pricing.js';
import { escapeHtml, fieldRow, form, layout, textRow } from './html.js';
import type { Priced, ProductDef, StepDef } from './products.js';

/** The pages of Mutuelle Tradition's extranet; `base` is the plugin's prefix ("/sandbox/tradition"). */

export const TEXTS = {
  loginHeading: 'Mutuelle Tradition - Extranet Partenaires',
  captchaHeading: 'Contrôle de sécurité',
  homeHeading: 'Accueil partenaire',
  invalidHeading: 'Session invalide — veuillez recommencer',
  unavailableHeading: 'Service indisponible',
  quoteHeading: 'Votre devis',
  badCredentials: 'Code partenaire ou mot de passe incorrect.',
  expired: 'Votre session a expiré. Veuillez vous identifier à nouveau.',
  tooManyTries: 'Trop de tentatives. Veuillez vous identifier à nouveau.',
  wrongCaptcha: (left: number) => `Code de sécurité incorrect. Un nouveau code vous est proposé (${left} essai(s) restant(s)).`,
  preparing: 'Votre devis est en cours de préparation. Actualisez la page dans quelques instants.',
} as const;

export function loginPage(base: string, viewState: string, alert: string | null, login = ''): string {
  const invalid = alert === TEXTS.badCredentials;
  return layout({
    title: 'Identification',
    heading: TEXTS.loginHeading,
    alert,
    body: form({
      action: `${base}/login`,
      target: '_top',
      viewState,
      rows:
        textRow('CODE_PART', 'Code partenaire', { value: login, invalid }) + textRow('MDP', 'Mot de passe', { type: 'password', invalid }),
      button: 'Connexion',
    }),
  });
}

export function captchaPage(base: string, captchaId: string, viewState: string, alert: string | null): string {
  return layout({
    title: 'Contrôle',
    heading: TEXTS.captchaHeading,
    alert,
    body:
      `<p>Recopiez les 5 caractères de l’image ci-dessous.</p><p><img src="${escapeHtml(base)}/captcha/${escapeHtml(captchaId)}.png" alt="Code de sécurité" width="152" height="64"></p>` +
      form({ action: `${base}/controle`, target: '_top', viewState, rows: textRow('CODE_SECU', 'Code de sécurité'), button: 'Valider' }),
  });
}

/** The extranet after login: a banner, a menu and the main frame ("principal") where quotes run. */
export function framesetPage(base: string): string {
  const b = escapeHtml(base);
  return `<!DOCTYPE html>
<html lang="fr"><head><meta charset="utf-8"><title>Extranet Partenaires - Mutuelle Tradition</title>
<style>body{margin:0;background:#e8e4d8}iframe{border:0;display:block}#m{float:left;width:200px;height:600px}#p{margin-left:200px;width:calc(100% - 200px);height:600px}</style></head>
<body>
<iframe name="bandeau" title="Bandeau" src="${b}/bandeau" style="width:100%;height:48px"></iframe>
<iframe name="menu" id="m" title="Menu" src="${b}/menu"></iframe>
<iframe name="principal" id="p" title="Contenu" src="${b}/accueil"></iframe>
</body></html>
`;
}

export function bannerPage(base: string, displayName: string): string {
  return `<!DOCTYPE html><html lang="fr"><head><meta charset="utf-8"><title>Bandeau</title></head>
<body style="margin:0;background:#6b1d1d;color:#fff;font:bold 13px Verdana,sans-serif;padding:12px">
<form method="post" action="${escapeHtml(base)}/logout" target="_top" style="float:right;margin:0"><input type="submit" value="Déconnexion"></form>
Mutuelle Tradition · Extranet Partenaires · ${escapeHtml(displayName)}
</body></html>
`;
}

export function menuPage(base: string): string {
  const link = (path: string, label: string) => `<li><a href="${escapeHtml(base)}${path}" target="principal">${escapeHtml(label)}</a></li>`;
  return layout({
    title: 'Menu',
    body: `<nav aria-label="Menu"><ul>${link('/accueil', 'Accueil')}${link('/devis/nouveau/automobile', 'Devis Automobile')}${link('/devis/nouveau/habitation', 'Devis Habitation')}${link('/devis/nouveau/rc_pro', 'Devis RC Professionnelle')}</ul></nav>`,
  });
}

export function homePage(base: string, displayName: string, openDraft: string | null): string {
  const resume = openDraft
    ? `<p><a href="${escapeHtml(base)}/devis/${escapeHtml(openDraft)}">Reprendre le devis n°${escapeHtml(openDraft)}</a></p>`
    : '';
  return layout({
    title: 'Accueil',
    heading: TEXTS.homeHeading,
    body: `<p>Bienvenue, ${escapeHtml(displayName)}. Choisissez un produit dans le menu.</p>${resume}`,
  });
}

function stepHeading(product: ProductDef, steps: readonly StepDef[], index: number): string {
  // No ": " in a heading: an ARIA snapshot would quote the line, and page checks read them unquoted.
  return `${product.label} — Étape ${index + 1}/${steps.length} — ${steps[index]?.title ?? ''}`;
}

export function stepPage(
  base: string,
  view: { no: string; product: ProductDef; steps: readonly StepDef[]; index: number; values: Readonly<Record<string, string>> },
  viewState: string,
  errors: readonly string[] | null = null,
  invalid: ReadonlySet<string> = new Set(),
): string {
  const step = view.steps[view.index];
  const last = view.index === view.steps.length - 1;
  return layout({
    title: view.product.label,
    heading: stepHeading(view.product, view.steps, view.index),
    alert: errors,
    body:
      `<p class="numero">Devis n°${escapeHtml(view.no)}</p>` +
      form({
        action: `${base}/devis/${view.no}`,
        viewState,
        rows: (step?.fields ?? []).map((f) => fieldRow(f, view.values[f.name] ?? '', invalid.has(f.name))).join(''),
        button: last ? 'Tarifer' : 'Suivant >>',
      }),
  });
}

export function quotePage(base: string, no: string, priced: Priced, pdfReady: boolean): string {
  const b = escapeHtml(base);
  const rows: [string, string][] = [
    ['N° de devis', no],
    ['Souscripteur', priced.insuredName],
    ['Formule', priced.formule],
    ['Prime annuelle TTC', formatEuros(priced.premiumEur)],
  ];
  const table = `<table class="saisie" aria-label="Tarif">${rows.map(([k, v]) => `<tr><th scope="row">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>`;
  const pdf = pdfReady
    ? `<p><a href="${b}/devis/${escapeHtml(no)}/pdf">Télécharger le devis (PDF)</a></p>`
    : `<p role="status">${escapeHtml(TEXTS.preparing)}</p><p><a href="${b}/devis/${escapeHtml(no)}">Actualiser</a></p>`;
  return layout({ title: 'Devis', heading: TEXTS.quoteHeading, body: table + pdf });
}

export function messagePage(heading: string, body: string, base: string): string {
  return layout({
    title: heading,
    heading,
    body: `<p>${escapeHtml(body)}</p><p><a href="${escapeHtml(base)}/accueil">Retour à l’accueil</a></p>`,
  });
}

export function phonePage(captchas: readonly { text: string; shownAtMs: number }[]): string {
  const items = captchas.map((c) => `<li><strong>${escapeHtml(c.text)}</strong> (${new Date(c.shownAtMs).toISOString()})</li>`).join('');
  return layout({
    title: 'Téléphone de test',
    heading: 'Téléphone de test – Mutuelle Tradition',
    body: `<h2>Codes de sécurité affichés (le plus récent d’abord)</h2>${items ? `<ul>${items}</ul>` : '<p>Aucun.</p>'}<h2>Codes envoyés</h2><p>Aucun : ce portail n’envoie pas de code.</p>`,
  });
}
