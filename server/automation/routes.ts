import type { FastifyInstance } from 'fastify';
import {
  answerMfa,
  cancelJob,
  enqueueTarification,
  getAutomationStatus,
  getJob,
  getProductSchema,
  getWallet,
  listJobs,
  listProducts,
} from '../../shared/automation.js';
import { requestKey } from '../api-keys/routes.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { registerEndpoint } from '../http/endpoint.js';
import * as wallet from '../wallet/service.js';
import * as catalogue from './catalogue.js';
import * as automation from './service.js';
import type { Worker } from './worker.js';

export async function automationRoutes(app: FastifyInstance, { deps, worker }: { deps: Deps; worker: Worker }): Promise<void> {
  registerEndpoint(app, listProducts, () => catalogue.listProducts(deps));
  registerEndpoint(app, getProductSchema, (request) => catalogue.productSchemaDocument(deps, request.params.code, request.query.compagnie));

  registerEndpoint(app, enqueueTarification, (request, reply) => {
    const { cabinetId } = requestKey(request);
    if (request.body.dry_run === true) return automation.dryRunTarification(deps, cabinetId, request.body);
    const enqueued = automation.enqueueTarification(deps, cabinetId, request.body);
    worker.wake();
    return reply.code(202).header('Location', enqueued.poll_url).send(enqueued);
  });

  registerEndpoint(app, getJob, (request) => automation.getJob(deps, requestKey(request).cabinetId, request.params.job_id));
  registerEndpoint(app, listJobs, (request) => automation.listJobs(deps, requestKey(request).cabinetId, request.query));

  registerEndpoint(app, cancelJob, (request) => {
    const { job, wasActive } = automation.cancelJob(deps, requestKey(request).cabinetId, request.params.job_id);
    if (wasActive) worker.abort(job.job_id);
    return job;
  });

  registerEndpoint(app, answerMfa, (request) => {
    const { cabinetId } = requestKey(request);
    const job = automation.getJob(deps, cabinetId, request.params.job_id);
    if (!worker.answerMfa(cabinetId, job.job_id, request.body.code)) {
      throw new ApiError('job_not_awaiting_mfa', `The job is ${job.status}, not waiting for a code.`, { status: job.status });
    }
    return automation.getJob(deps, cabinetId, job.job_id);
  });

  registerEndpoint(app, getWallet, (request) => wallet.getWallet(deps, requestKey(request).cabinetId));
  registerEndpoint(app, getAutomationStatus, (request) => automation.automationStatus(deps, requestKey(request).cabinetId, worker.running()));
}
