import type { FastifyInstance } from 'fastify';
import { consoleSearch } from '../../shared/console-search.js';
import type { Deps } from '../deps.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import { consoleUser } from './guard.js';
import { searchRecords } from './search.js';

/** The header's search, for the signed-in user's cabinet. */
export async function searchConsoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  registerEndpoint(app, consoleSearch, (request) => searchRecords(deps, consoleUser(request).cabinetId, request.query.q));
}
