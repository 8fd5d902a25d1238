import type { FastifyInstance } from 'fastify';
import { CONSOLE_API_PREFIX, PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { CONSOLE_DOCUMENT_ENDPOINTS, PUBLIC_DOCUMENT_ENDPOINTS } from '../../shared/catalogue.js';
import { getApiDocs, getConsoleOpenApiDocument, getOpenApiDocument } from '../../shared/meta.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import { buildOpenApiDocument } from './document.js';
import { renderDocsPage } from './docs-page.js';

const ERRORS_SENTENCE = 'Errors are JSON objects {error, message, details?, request_id}; `error` is a stable code (see x-error-codes).';

export async function openApiRoutes(app: FastifyInstance, options: { version: string }): Promise<void> {
  // Built once: the contract does not change while the server runs.
  const document = buildOpenApiDocument(PUBLIC_DOCUMENT_ENDPOINTS, {
    version: options.version,
    title: 'Courtier public API',
    description:
      'REST API of a Courtier service: CRM records, quotes (devis), automated insurer pricing, webhooks; and the MCP endpoint with its OAuth authorization server. ' +
      `Authenticate with an API key in X-API-Key or Authorization: Bearer. ${ERRORS_SENTENCE}`,
    serverUrl: PUBLIC_API_PREFIX,
  });
  const consoleDocument = buildOpenApiDocument(CONSOLE_DOCUMENT_ENDPOINTS, {
    version: options.version,
    title: 'Courtier console API',
    description: `The API the console's pages call (a session cookie and X-CSRF-Token, never an API key), the console's pages, and the service's health. ${ERRORS_SENTENCE}`,
    serverUrl: CONSOLE_API_PREFIX,
  });
  const page = renderDocsPage(document);
  registerEndpoint(app, getOpenApiDocument, () => document);
  registerEndpoint(app, getConsoleOpenApiDocument, () => consoleDocument);
  registerEndpoint(app, getApiDocs, (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
      .send(page),
  );
}
