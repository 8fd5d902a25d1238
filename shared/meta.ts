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
