import { SCOPES } from '../../shared/scopes.js';
import { escapeHtml } from '../platform/http/html.js';
import type { OpenApiDocument } from './document.js';

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

function code(value: unknown): string {
  return `<pre><code>${escapeHtml(JSON.stringify(value, null, 2))}</code></pre>`;
}

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  parameters?: { name: string; in: string; required: boolean; description?: string; schema: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema?: unknown }> }>;
  'x-required-scope'?: string;
  security: unknown[];
}

function renderOperation(method: string, path: string, op: Operation): string {
  const auth =
    op.security.length === 0
      ? 'No authentication.'
      : op['x-required-scope']
        ? `API key with scope <code>${escapeHtml(op['x-required-scope'])}</code>.`
        : JSON.stringify(op.security).includes('McpOAuth')
          ? 'MCP access token (OAuth 2.1).'
          : 'Any valid API key.';
  const parameters = op.parameters ?? [];
  const params = parameters.length
    ? `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Required</th><th>Description</th></tr></thead><tbody>${parameters
        .map(
          (p) =>
            `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td><td>${escapeHtml(p.description ?? '')}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : '';
  const body = op.requestBody
    ? Object.entries(op.requestBody.content)
        .map(([type, content]) => `<h4>Request body (${escapeHtml(type)})</h4>${code(content.schema)}`)
        .join('')
    : '';
  const responses = Object.entries(op.responses)
    .map(([status, r]) => {
      const schema = r.content?.['application/json']?.schema;
      const isError = Number(status) >= 400;
      return `<li><strong>${status}</strong> ${escapeHtml(r.description).replace(/`([^`]+)`/g, '<code>$1</code>')}${schema && !isError ? code(schema) : ''}</li>`;
    })
    .join('');
  return `<section id="${escapeHtml(op.operationId)}"><h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p><strong>${escapeHtml(op.summary)}</strong>${op.description ? ` ${escapeHtml(op.description)}` : ''}</p><p>${auth}</p>${params}${body}<h4>Responses</h4><ul>${responses}</ul></section>`;
}

/** A self-contained reference page rendered from the OpenAPI document: no script, no CDN. */
export function renderDocsPage(document: OpenApiDocument): string {
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, op]) => ({ path, method, op: op as Operation })),
  );
  const server = document.servers[0]?.url ?? '';
  const nav = operations
    .map(
      ({ path, method, op }) =>
        `<li><a href="#${escapeHtml(op.operationId)}"><span class="method ${method}">${method.toUpperCase()}</span> ${escapeHtml(path)}</a></li>`,
    )
    .join('');
  const scopes = Object.entries(SCOPES)
    .map(([s, d]) => `<tr><td><code>${s}</code></td><td>${escapeHtml(d)}</td></tr>`)
    .join('');
  const errors = Object.entries(document['x-error-codes'])
    .map(([c, e]) => `<tr><td><code>${c}</code></td><td>${e.status}</td><td>${escapeHtml(e.description)}</td></tr>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(String(document.info.title))} ${escapeHtml(String(document.info.version))}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;display:grid;grid-template-columns:300px 1fr;color:#1d232b}
nav{background:#f4f6f8;padding:1rem;height:100vh;overflow:auto;position:sticky;top:0}nav ul{list-style:none;padding:0}nav a{color:inherit;text-decoration:none;font-size:13px}
main{padding:1rem 2rem;max-width:60rem}pre{background:#f4f6f8;padding:.75rem;overflow:auto;font-size:12px;max-height:24rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d5dbe1;padding:.25rem .5rem;text-align:left;vertical-align:top}
.method{display:inline-block;min-width:3.5rem;font-weight:700;font-size:12px}.get{color:#0b6e4f}.post{color:#1f5fbf}.patch{color:#8a5a00}.delete{color:#b3261e}
section{border-top:1px solid #d5dbe1;padding-top:.5rem;margin-top:1.5rem}
</style></head><body>
<nav aria-label="Endpoints"><strong>${escapeHtml(String(document.info.title))}</strong><ul>${nav}</ul></nav>
<main><h1>${escapeHtml(String(document.info.title))} <small>${escapeHtml(String(document.info.version))}</small></h1>
<p>${escapeHtml(String(document.info.description))}</p>
<p>Base URL: <code>${escapeHtml(server)}</code>. Machine-readable: <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</p>
<h2>Authentication</h2><p>Send the API key as <code>X-API-Key: svc_prod_…</code> or <code>Authorization: Bearer svc_prod_…</code>. Keys are created in the console or with <code>courtier keys create</code>, shown once, and carry scopes:</p>
<table><thead><tr><th>Scope</th><th>Allows</th></tr></thead><tbody>${scopes}</tbody></table>
<h2>Errors</h2><p>Every error is <code>{"error": code, "message": text, "details"?: …, "request_id": id}</code>; the request id is also in <code>X-Request-Id</code>.</p>
<table><thead><tr><th>Code</th><th>Status</th><th>Meaning</th></tr></thead><tbody>${errors}</tbody></table>
<h2>Endpoints</h2>${operations.map(({ path, method, op }) => renderOperation(method, path, op)).join('\n')}
</main></body></html>`;
}
