import type { FastifyInstance } from 'fastify';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { PUBLIC_ENDPOINTS } from '../../shared/catalogue.js';
import { getApiDocs, getOpenApiDocument } from '../../shared/meta.js';
import { registerEndpoint } from '../http/endpoint.js';
import { buildOpenApiDocument } from './document.js';
import { renderDocsPage } from './docs-page.js';

export async function openApiRoutes(app: FastifyInstance, options: { version: string }): Promise<void> {
  // Built once: the contract does not change while the server runs.
  const document = buildOpenApiDocument(PUBLIC_ENDPOINTS, { version: options.version, serverUrl: PUBLIC_API_PREFIX });
  const page = renderDocsPage(document);
  registerEndpoint(app, getOpenApiDocument, () => document);
  registerEndpoint(app, getApiDocs, (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
      .send(page),
  );
}
