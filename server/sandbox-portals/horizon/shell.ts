import { escapeHtml } from '../../platform/http/html.js';
import type { Approval, ApprovalStatus } from './state.js';

/**
 * The few pages the server draws itself: the app's shell (everything else is drawn by app.js from
 * the API), the outage page, and the tester's phone. Styles come from app.css: the CSP allows no
 * inline style or script.
 */

const OUTAGE_HEADING = 'Horizon Direct est en maintenance';

function page(base: string, title: string, body: string, script = false): string {
  const b = escapeHtml(base);
  return `<!doctype html>
<html lang="fr">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${b}/app.css">${script ? `\n<script src="${b}/app.js" defer></script>` : ''}
</head>
<body data-base="${b}">
<header class="top"><p class="brand">Horizon Direct</p><p class="tagline">Espace partenaires</p></header>
${body}
</body>
</html>`;
}

export function shellPage(base: string): string {
  return page(base, 'Horizon Direct – Espace partenaires', '<main id="app" aria-busy="true"><p>Chargement…</p></main>', true);
}

export function outagePage(base: string): string {
  return page(base, OUTAGE_HEADING, `<main><h1>${OUTAGE_HEADING}</h1><p>Nos services reviennent dans quelques instants.</p></main>`);
}

const STATUS_LABELS: Record<ApprovalStatus, string> = { pending: 'En attente', approved: 'Approuvée', expired: 'Expirée' };

export function phonePage(base: string, list: readonly { approval: Approval; status: ApprovalStatus }[]): string {
  const b = escapeHtml(base);
  const items = list.map(({ approval, status }) => {
    const when = new Date(approval.requestedAt).toISOString().slice(11, 19);
    const action =
      status === 'pending'
        ? `<form method="post" action="${b}/phone/approbations/${escapeHtml(approval.id)}/approuver"><button type="submit">Approuver</button></form>`
        : '';
    return `<li><p>Connexion de <strong>${escapeHtml(approval.login)}</strong> à ${when} UTC – ${STATUS_LABELS[status]}</p>${action}</li>`;
  });
  return page(
    base,
    'Téléphone de test – Horizon',
    `<main><h1>Application Horizon (téléphone de test)</h1>${
      items.length > 0 ? `<ul class="approvals">${items.join('')}</ul>` : '<p>Aucune demande de connexion.</p>'
    }</main>`,
  );
}

export const APP_CSS = `body{font-family:system-ui,sans-serif;margin:0;color:#14213d;background:#f4f6fb}
.top{display:flex;gap:1rem;align-items:baseline;background:#14213d;color:#fff;padding:.6rem 1.5rem}
.brand{font-weight:700;margin:0}.tagline{margin:0;opacity:.8}
main{max-width:48rem;margin:1.5rem auto;background:#fff;padding:1.5rem;border-radius:8px}
.field{margin:.8rem 0;display:flex;flex-direction:column;gap:.25rem}
.field-error{color:#b00020;margin:0}.summary{color:#b00020;font-weight:600}
.offers{display:grid;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr));gap:1rem;padding:0;list-style:none}
.offer{border:1px solid #ccd;border-radius:6px;padding:1rem}
button{background:#fca311;border:0;border-radius:4px;padding:.5rem 1rem;font-weight:600;cursor:pointer}`;
