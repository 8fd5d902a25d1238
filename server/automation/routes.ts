import type { FastifyInstance } from 'fastify';
import { createReadStream } from 'node:fs';
import {
  answerMfa,
  getJobArtifact,
  getMfaImage,
  cancelJob,
  enqueueTarification,
  getAutomationStatus,
  getJob,
  listJobs,
} from '../../shared/automation.js';
import { getProductSchema, listProducts } from '../../shared/products.js';
import { getWallet } from '../../shared/wallet.js';
import { requestKey } from '../api-keys/routes.js';
import type { Deps } from '../deps.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import type { BrowserRuntime } from '../robots/browser.js';
import * as wallet from '../wallet/service.js';
import * as catalogue from './catalogue.js';
import * as artifacts from './artifacts.js';
import * as jobs from './jobs.js';
import * as automation from './service.js';
import * as jobControls from './job-controls.js';
import type { RobotControl } from './robot-control.js';

export async function automationRoutes(
  app: FastifyInstance,
  { deps, robots, runtime }: { deps: Deps; robots: RobotControl; runtime: BrowserRuntime },
): Promise<void> {
  registerEndpoint(app, listProducts, () => catalogue.listProducts(deps));
  registerEndpoint(app, getProductSchema, (request) => catalogue.productSchemaDocument(deps, request.params.code, request.query.compagnie));

  registerEndpoint(app, enqueueTarification, (request) => {
    const { cabinetId, environment } = requestKey(request);
    if (request.body.dry_run === true) return automation.dryRunTarification(deps, cabinetId, request.body, environment);
    const enqueued = automation.enqueueTarification(deps, cabinetId, request.body, environment, { enqueuedBy: 'integration' });
    return respond(202, enqueued, { Location: enqueued.poll_url });
  });

  registerEndpoint(app, getJob, (request) => jobs.getJob(deps, requestKey(request).cabinetId, request.params.job_id));
  registerEndpoint(app, listJobs, (request) => jobs.listJobs(deps, requestKey(request).cabinetId, request.query));

  registerEndpoint(app, cancelJob, (request) =>
    jobControls.cancelJobAndRobot(deps, robots, requestKey(request).cabinetId, request.params.job_id),
  );

  registerEndpoint(app, answerMfa, (request) =>
    jobControls.giveMfaCode(deps, robots, requestKey(request).cabinetId, request.params.job_id, request.body),
  );

  registerEndpoint(app, getJobArtifact, (request, reply) => {
    const { job_id, name } = request.params;
    const file = artifacts.jobArtifactFile(deps, requestKey(request).cabinetId, job_id, name, runtime.artifactsDir(job_id));
    return reply
      .type(artifacts.artifactContentType(name))
      .header('Content-Disposition', `attachment; filename="${job_id}-${name}"`)
      .send(createReadStream(file));
  });

  registerEndpoint(app, getMfaImage, (request, reply) => {
    const image = jobControls.mfaImage(deps, robots, requestKey(request).cabinetId, request.params.job_id);
    return reply.type(image.mime).header('Cache-Control', 'no-store').send(image.data);
  });

  registerEndpoint(app, getWallet, (request) => wallet.getWallet(deps, requestKey(request).cabinetId));
  registerEndpoint(app, getAutomationStatus, (request) =>
    automation.automationStatus(deps, requestKey(request).cabinetId, robots.running()),
  );
}
