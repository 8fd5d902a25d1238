import type { FastifyInstance } from 'fastify';
import { getRiskSchema } from '../../shared/comparaisons.js';
import type { Deps } from '../deps.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import * as comparaisons from './service.js';

export async function comparaisonRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  registerEndpoint(app, getRiskSchema, (request) => comparaisons.riskSchemaDocument(deps, request.params.ligne));
}
