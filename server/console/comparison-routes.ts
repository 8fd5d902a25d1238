import type { FastifyInstance } from 'fastify';
import {
  createConsoleComparison,
  createConsoleConseil,
  getConsoleComparison,
  getConsoleConseilPdf,
  getConsoleRiskSchema,
  listConsoleComparisons,
  listConsoleConseils,
} from '../../shared/console-comparaisons.js';
import { requestActor } from '../audit/service.js';
import * as comparaisons from '../comparaisons/service.js';
import * as conseils from '../comparaisons/conseil.js';
import type { Deps } from '../deps.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import { creditBalance } from '../wallet/service.js';
import { consoleUser } from './guard.js';

/**
 * The Compare page's routes: the comparisons service as the REST API calls it, for the signed-in
 * user's cabinet, with its own insurer logins (the console prices as a live key does).
 */
export async function comparisonConsoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const cabinet = (request: Parameters<typeof consoleUser>[0]) => consoleUser(request).cabinetId;

  registerEndpoint(app, getConsoleRiskSchema, (request) => comparaisons.riskSchemaDocument(deps, request.params.ligne));

  registerEndpoint(app, createConsoleComparison, (request) => {
    const cabinetId = cabinet(request);
    if (request.body.dry_run === true) {
      const dryRun = comparaisons.dryRunComparison(deps, cabinetId, request.body, 'prod');
      return { ...dryRun, balance: creditBalance(deps, cabinetId) };
    }
    const created = comparaisons.createComparison(deps, cabinetId, request.body, 'prod');
    request.log.info({ comparaison_id: created.comparaison_id, jobs: created.jobs.length }, 'comparison started from the console');
    return respond(202, created);
  });

  registerEndpoint(app, getConsoleComparison, (request) =>
    comparaisons.getComparison(deps, cabinet(request), request.params.comparaison_id),
  );
  registerEndpoint(app, listConsoleComparisons, (request) => comparaisons.listComparisons(deps, cabinet(request), request.query));

  registerEndpoint(app, createConsoleConseil, async (request) =>
    respond(201, await conseils.createConseil(deps, cabinet(request), request.params.comparaison_id, request.body, requestActor(request))),
  );
  registerEndpoint(app, getConsoleConseilPdf, (request, reply) => {
    const { conseil_id } = request.params;
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="conseil-${conseil_id}.pdf"`)
      .header('Cache-Control', 'private, no-store')
      .send(conseils.conseilPdf(deps, cabinet(request), conseil_id));
  });
  registerEndpoint(app, listConsoleConseils, (request) => conseils.listConseils(deps, cabinet(request), request.query));
}
