import { escapeHtml } from '../../platform/http/html.js';
import type { FieldDef } from './products.js';

/**
 * The legacy look of Mutuelle Tradition's extranet: table layouts, uppercase field names, a
 * hidden __VIEWSTATE in every form, and French dates typed as text. Still accessible to a robot
 * reading roles: every control has its <label for>, errors are one role="alert", one <h1> a page.
 */

const STYLE = `
body{font-family:Verdana,Arial,sans-serif;font-size:12px;margin:0;background:#e8e4d8;color:#222}
h1{font-size:15px;color:#6b1d1d;border-bottom:2px solid #6b1d1d;padding-bottom:3px}
table.saisie td{padding:3px 6px;vertical-align:top}
table.saisie td.lib{text-align:right;font-weight:bold;width:14em}
input[type=text],input[type=password],select{font-size:12px;border:1px solid #777;width:16em}
input[type=submit]{font-size:12px;background:#6b1d1d;color:#fff;border:1px outset #999;padding:2px 10px}
.erreur{border:1px solid #b00;background:#fee;color:#900;padding:4px 8px;margin:6px 0}
.aide{color:#555;font-size:11px}
.cadre{padding:8px 12px}
.numero{float:right;color:#555}
iframe{border:0;display:block}
`;

export interface LayoutOptions {
  title: string;
  /** The page's single <h1>; none on the frameset. */
  heading?: string;
  body: string;
  alert?: string | readonly string[] | null;
}

export function layout(options: LayoutOptions): string {
  const alerts =
    options.alert === undefined || options.alert === null ? [] : typeof options.alert === 'string' ? [options.alert] : options.alert;
  const alert =
    alerts.length === 0
      ? ''
      : `<div role="alert" class="erreur">${alerts.length === 1 ? escapeHtml(alerts[0] ?? '') : `<ul>${alerts.map((a) => `<li>${escapeHtml(a)}</li>`).join('')}</ul>`}</div>`;
  return `<!DOCTYPE html>
<html lang="fr">
<head>
<meta charset="utf-8">
<title>${escapeHtml(options.title)} - Mutuelle Tradition</title>
<style>${STYLE}</style>
</head>
<body><div class="cadre">
${options.heading ? `<h1>${escapeHtml(options.heading)}</h1>` : ''}
${alert}
${options.body}
</div></body>
</html>
`;
}

/** A form that posts back with its one-use view state; `target` "_top" leaves the frames. */
export function form(options: { action: string; viewState: string; rows: string; button: string; target?: string }): string {
  const target = options.target ? ` target="${escapeHtml(options.target)}"` : '';
  return `<form method="post" action="${escapeHtml(options.action)}"${target} novalidate>
<input type="hidden" name="__VIEWSTATE" value="${escapeHtml(options.viewState)}">
<table class="saisie">${options.rows}
<tr><td></td><td><input type="submit" value="${escapeHtml(options.button)}"></td></tr></table></form>`;
}

function hint(field: Pick<FieldDef, 'name' | 'hint'>): string {
  return field.hint ? ` <span class="aide" id="${escapeHtml(field.name)}_aide">${escapeHtml(field.hint)}</span>` : '';
}

/** One table row of a wizard's field, with its value kept after a refusal. */
export function fieldRow(field: FieldDef, value: string, invalid: boolean): string {
  const name = escapeHtml(field.name);
  const bad = invalid ? ' aria-invalid="true"' : '';
  const described = field.hint ? ` aria-describedby="${name}_aide"` : '';
  if (field.kind === 'radio') {
    const radios = (field.options ?? [])
      .map(
        (o) =>
          `<input type="radio" id="${name}_${escapeHtml(o.value)}" name="${name}" value="${escapeHtml(o.value)}"${o.value === value ? ' checked' : ''}><label for="${name}_${escapeHtml(o.value)}">${escapeHtml(o.label)}</label>`,
      )
      .join(' ');
    return `<tr><td class="lib">${escapeHtml(field.label)}</td><td><fieldset${bad}><legend>${escapeHtml(field.label)}</legend>${radios}</fieldset></td></tr>`;
  }
  const label = `<td class="lib"><label for="${name}">${escapeHtml(field.label)}</label></td>`;
  if (field.kind === 'select') {
    const options = [`<option value="">-- Sélectionner --</option>`]
      .concat(
        (field.options ?? []).map(
          (o) => `<option value="${escapeHtml(o.value)}"${o.value === value ? ' selected' : ''}>${escapeHtml(o.label)}</option>`,
        ),
      )
      .join('');
    return `<tr>${label}<td><select id="${name}" name="${name}"${bad}${described}>${options}</select>${hint(field)}</td></tr>`;
  }
  return `<tr>${label}<td><input type="text" id="${name}" name="${name}" value="${escapeHtml(value)}" maxlength="100"${bad}${described}>${hint(field)}</td></tr>`;
}

export function textRow(
  id: string,
  label: string,
  options: { type?: 'text' | 'password'; value?: string; invalid?: boolean } = {},
): string {
  const value = options.type === 'password' ? '' : ` value="${escapeHtml(options.value ?? '')}"`;
  return `<tr><td class="lib"><label for="${id}">${escapeHtml(label)}</label></td><td><input type="${options.type ?? 'text'}" id="${id}" name="${id}"${value} maxlength="100"${options.invalid ? ' aria-invalid="true"' : ''}></td></tr>`;
}

export { escapeHtml };
