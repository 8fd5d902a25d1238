import type { FastifyInstance } from 'fastify';
import {
  createComparison,
  createConseil,
  getComparison,
  getConseilPdf,
  getRiskSchema,
  listComparisons,
  listConseils,
} from '../../shared/comparaisons.js';
import { requestActor } from '../audit/service.js';
import * as conseils from './conseil.js';
import { requestKey } from '../api-keys/routes.js';
import type { Deps } from '../deps.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import * as comparaisons from './service.js';

export async function comparaisonRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  // A comparison completes when its last job ends: told by the jobs' signal, and checked at start for one a stop interrupted.
  const unlisten = deps.jobSignal.listen((changes) => {
    try {
      comparaisons.settleComparisons(
        deps,
        comparaisons.comparisonsOfJobs(
          deps,
          changes.map((c) => c.jobId),
        ),
      );
    } catch (err) {
      app.log.error({ err }, 'A comparison could not be settled; it will be at the next start.');
    }
  });
  app.addHook('onReady', async () => comparaisons.settleComparisons(deps, comparaisons.openComparisons(deps)));
  app.addHook('onClose', async () => void unlisten());

  registerEndpoint(app, getRiskSchema, (request) => comparaisons.riskSchemaDocument(deps, request.params.ligne));

  registerEndpoint(app, createComparison, (request) => {
    const { cabinetId, environment } = requestKey(request);
    if (request.body.dry_run === true) return comparaisons.dryRunComparison(deps, cabinetId, request.body, environment);
    const created = comparaisons.createComparison(deps, cabinetId, request.body, environment);
    return respond(202, created, { Location: created.poll_url });
  });

  registerEndpoint(app, getComparison, (request) =>
    comparaisons.getComparison(deps, requestKey(request).cabinetId, request.params.comparaison_id),
  );
  registerEndpoint(app, listComparisons, (request) => comparaisons.listComparisons(deps, requestKey(request).cabinetId, request.query));

  registerEndpoint(
    app,
    createConseil,
    async (request) =>
      respond(
        201,
        await conseils.createConseil(
          deps,
          requestKey(request).cabinetId,
          request.params.comparaison_id,
          request.body,
          requestActor(request),
        ),
      ),
    { asynchronous: true },
  );
  registerEndpoint(app, getConseilPdf, (request, reply) => {
    const { conseil_id } = request.params;
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="conseil-${conseil_id}.pdf"`)
      .send(conseils.conseilPdf(deps, requestKey(request).cabinetId, conseil_id));
  });
  registerEndpoint(app, listConseils, (request) => conseils.listConseils(deps, requestKey(request).cabinetId, request.query));
}
