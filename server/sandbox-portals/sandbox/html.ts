/**
 * Server-rendered HTML of the sandbox insurer portal: one layout and accessible form controls
 * (every control has a <label for>, errors are announced in role="alert", one <h1> per page).
 * Forms carry `novalidate` and no `required`/`min`/`max` attributes, so that every check happens
 * on the server, as on the real extranets the robots face.
 */

import { escapeHtml } from '../../platform/http/html.js';

export { escapeHtml };

const STYLE = `
body{font-family:system-ui,sans-serif;margin:0;color:#1b1b1b;background:#f4f6f8}
header{background:#0b3d6e;color:#fff;padding:.6rem 1.2rem;display:flex;justify-content:space-between;align-items:center}
header p{margin:0;font-weight:600}
header button{background:#fff;color:#0b3d6e}
main{max-width:44rem;margin:1.5rem auto;background:#fff;padding:1.5rem;border-radius:6px}
label,legend{display:block;font-weight:600;margin-top:1rem}
input,select{font:inherit;padding:.35rem;margin-top:.25rem;min-width:16rem}
input[type=radio]{min-width:0}
fieldset{border:1px solid #ccd;margin-top:1rem}
fieldset label{display:inline;font-weight:400;margin:0 1rem 0 .3rem}
button{font:inherit;padding:.45rem 1rem;margin-top:1.2rem;background:#0b3d6e;color:#fff;border:0;border-radius:4px;cursor:pointer}
[role=alert]{border-left:4px solid #b00020;background:#fde8eb;padding:.6rem 1rem;margin:1rem 0}
[aria-invalid=true]{border:2px solid #b00020}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1.2rem}dt{font-weight:600}dd{margin:0}
.hint{display:block;color:#555;font-size:.9rem}
`;

export interface LayoutOptions {
  /** The document title and the page's single <h1>. */
  heading: string;
  /** Already-built inner HTML of <main>, after the <h1> and the alert. */
  body: string;
  /** One or more error messages, shown in a single role="alert" element. */
  alert?: string | readonly string[] | null;
  /** The portal's base path (the plugin prefix), for the header's logout form. */
  base: string;
  /** Shows the "Se déconnecter" button. */
  loggedIn?: boolean;
}

export function layout(options: LayoutOptions): string {
  const alerts =
    options.alert === undefined || options.alert === null ? [] : typeof options.alert === 'string' ? [options.alert] : options.alert;
  const alertHtml =
    alerts.length === 0
      ? ''
      : alerts.length === 1
        ? `<div role="alert"><p>${escapeHtml(alerts[0] ?? '')}</p></div>`
        : `<div role="alert"><ul>${alerts.map((a) => `<li>${escapeHtml(a)}</li>`).join('')}</ul></div>`;
  const logout = options.loggedIn
    ? `<form method="post" action="${escapeHtml(options.base)}/logout"><button type="submit">Se déconnecter</button></form>`
    : '';
  return `<!doctype html>
<html lang="fr">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.heading)} – Sandbox Assurances</title>
<style>${STYLE}</style>
</head>
<body>
<header><p>Sandbox Assurances · extranet courtiers (démonstration)</p>${logout}</header>
<main>
<h1>${escapeHtml(options.heading)}</h1>
${alertHtml}
${options.body}
</main>
</body>
</html>
`;
}

export interface FieldCommon {
  id: string;
  label: string;
  /** Defaults to id. */
  name?: string;
  invalid?: boolean;
  hint?: string;
}

function describedBy(field: FieldCommon): string {
  return field.hint ? ` aria-describedby="${escapeHtml(field.id)}-hint"` : '';
}

function hintHtml(field: FieldCommon): string {
  return field.hint ? `<span class="hint" id="${escapeHtml(field.id)}-hint">${escapeHtml(field.hint)}</span>` : '';
}

export function textField(
  field: FieldCommon & {
    type?: 'text' | 'date' | 'password';
    value?: string;
    autocomplete?: string;
    inputmode?: 'numeric' | 'decimal' | 'text';
  },
): string {
  const attrs = [
    `id="${escapeHtml(field.id)}"`,
    `name="${escapeHtml(field.name ?? field.id)}"`,
    `type="${field.type ?? 'text'}"`,
    field.type === 'password' ? '' : `value="${escapeHtml(field.value ?? '')}"`,
    field.autocomplete ? `autocomplete="${escapeHtml(field.autocomplete)}"` : '',
    field.inputmode ? `inputmode="${field.inputmode}"` : '',
    'aria-required="true"',
    field.invalid ? 'aria-invalid="true"' : '',
  ].filter(Boolean);
  return `<div><label for="${escapeHtml(field.id)}">${escapeHtml(field.label)}</label>${hintHtml(field)}<input ${attrs.join(' ')}${describedBy(field)}></div>`;
}

export interface Choice {
  value: string;
  label: string;
}

export function selectField(field: FieldCommon & { options: readonly Choice[]; value?: string }): string {
  const options = [`<option value="">— Choisir —</option>`]
    .concat(
      field.options.map(
        (o) => `<option value="${escapeHtml(o.value)}"${o.value === field.value ? ' selected' : ''}>${escapeHtml(o.label)}</option>`,
      ),
    )
    .join('');
  return `<div><label for="${escapeHtml(field.id)}">${escapeHtml(field.label)}</label>${hintHtml(field)}<select id="${escapeHtml(field.id)}" name="${escapeHtml(
    field.name ?? field.id,
  )}" aria-required="true"${field.invalid ? ' aria-invalid="true"' : ''}${describedBy(field)}>${options}</select></div>`;
}

export function radioGroup(group: { legend: string; name: string; options: readonly Choice[]; value?: string; invalid?: boolean }): string {
  const radios = group.options
    .map((o) => {
      const id = `${group.name}-${o.value}`;
      return `<span><input type="radio" id="${escapeHtml(id)}" name="${escapeHtml(group.name)}" value="${escapeHtml(o.value)}"${
        o.value === group.value ? ' checked' : ''
      }><label for="${escapeHtml(id)}">${escapeHtml(o.label)}</label></span>`;
    })
    .join(' ');
  return `<fieldset${group.invalid ? ' aria-invalid="true"' : ''}><legend>${escapeHtml(group.legend)}</legend>${radios}</fieldset>`;
}

export function form(action: string, content: string, button: string): string {
  return `<form method="post" action="${escapeHtml(action)}" novalidate>${content}<button type="submit">${escapeHtml(button)}</button></form>`;
}

/** A definition list whose <dd> are named by their <dt> (aria-labelledby), so robots can read them by role. */
export function definitionList(entries: readonly { id: string; term: string; value: string }[]): string {
  return `<dl>${entries
    .map(
      (e) => `<dt id="${escapeHtml(e.id)}">${escapeHtml(e.term)}</dt><dd aria-labelledby="${escapeHtml(e.id)}">${escapeHtml(e.value)}</dd>`,
    )
    .join('')}</dl>`;
}
