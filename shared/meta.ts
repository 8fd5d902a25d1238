import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

export const getOpenApiDocument = defineEndpoint({
  method: 'GET',
  path: '/openapi.json',
  operationId: 'getOpenApiDocument',
  summary: 'This OpenAPI 3.1 document',
  tag: 'Meta',
  auth: 'none',
  responses: { 200: { description: 'The OpenAPI document of the public API.', schema: z.record(z.string(), z.unknown()) } },
  errors: [],
});

export const getApiDocs = defineEndpoint({
  method: 'GET',
  path: '/docs',
  operationId: 'getApiDocs',
  summary: 'Human-readable API reference',
  tag: 'Meta',
  auth: 'none',
  responses: { 200: { description: 'An HTML page rendered from the OpenAPI document.', contentType: 'text/html' } },
  errors: [],
});

export const healthSchema = z.object({ status: z.literal('ok'), version: z.string() });

export const getHealth = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/healthz',
  operationId: 'getHealth',
  summary: 'Liveness, for supervisors and the desktop shell',
  tag: 'Meta',
  auth: 'none',
  openOnLan: true,
  responses: { 200: { description: 'The service answers.', schema: healthSchema } },
  errors: [],
});

export const getConsoleOpenApiDocument = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/openapi.json',
  operationId: 'getConsoleOpenApiDocument',
  summary: 'The OpenAPI 3.1 document of the console’s API and the service’s pages',
  tag: 'Meta',
  auth: 'none',
  responses: { 200: { description: 'The OpenAPI document.', schema: z.record(z.string(), z.unknown()) } },
  errors: [],
});
