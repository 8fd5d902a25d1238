import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onRequestHookHandler } from 'fastify';
import type { z } from 'zod';
import { getProductSchema, tarificationRequestBody } from '../../shared/automation.js';
import {
  artifactParams,
  consoleJobsQuery,
  consolePaths,
  devisIdParams,
  insurerCodeParams,
  jobIdParams,
  mfaCodeBody,
  setCredentialsBody,
  type ConsoleInsurer,
  type TestLoginResult,
} from '../../shared/console-automation.js';
import * as catalogue from '../automation/catalogue.js';
import { testInsurerLogin } from '../automation/login-check.js';
import * as artifacts from '../automation/artifacts.js';
import * as jobs from '../automation/jobs.js';
import * as automation from '../automation/service.js';
import type { RobotControl } from '../automation/robot-control.js';
import { deleteInsurerCredentials, describeInsurerCredentials, setInsurerCredentials } from '../credentials/service.js';
import type { Deps } from '../deps.js';
import { readDevisPdf } from '../devis/service.js';
import { ApiError } from '../errors.js';
import type { BrowserRuntime } from '../robots/browser.js';
import { consoleGuard, consoleUser } from './guard.js';
import { registerJobEvents } from './job-events.js';

type Schemas = { body?: z.ZodType; querystring?: z.ZodType; params?: z.ZodType };
type Parsed<S extends Schemas> = FastifyRequest<{
  Body: S['body'] extends z.ZodType ? z.output<S['body']> : undefined;
  Querystring: S['querystring'] extends z.ZodType ? z.output<S['querystring']> : undefined;
  Params: S['params'] extends z.ZodType ? z.output<S['params']> : undefined;
}>;

/** Console API of the automation slice: insurers and credentials, pricing, jobs with live events, MFA answers. */
export async function automationConsoleRoutes(app: FastifyInstance, { deps, worker, runtime }: { deps: Deps; worker: RobotControl; runtime: BrowserRuntime }): Promise<void> {
  const anyUser = consoleGuard(deps);
  const adminOnly = consoleGuard(deps, { role: 'admin' });

  function route<S extends Schemas>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    guard: onRequestHookHandler,
    schemas: S,
    handler: (request: Parsed<S>, reply: FastifyReply) => unknown,
  ): void {
    app.route({
      method,
      url,
      schema: schemas as FastifySchema,
      onRequest: guard,
      handler: (request, reply) => handler(request as Parsed<S>, reply),
    });
  }

  // Insurers and credentials.

  route('GET', consolePaths.insurers, anyUser, {}, (request) => {
    const { cabinetId } = consoleUser(request);
    const data: ConsoleInsurer[] = deps.insurers.list().map((adapter) => ({
      code: adapter.code,
      name: adapter.name,
      products: adapter.products.map((p) => ({ code: p.code, label: p.label, kind: p.kind, cost_credits: catalogue.costOf(deps, p) })),
      credentials: describeInsurerCredentials(deps, cabinetId, adapter.code),
      can_test_login: typeof adapter.verifyLogin === 'function',
    }));
    return { data };
  });

  route('PUT', '/api/v1/console/insurers/:code/credentials', adminOnly, { params: insurerCodeParams, body: setCredentialsBody }, (request) => {
    const { cabinetId } = consoleUser(request);
    const saved = setInsurerCredentials(deps, cabinetId, request.params.code, request.body);
    request.log.info({ compagnie: request.params.code }, 'insurer credentials set from the console');
    return saved;
  });

  route('DELETE', '/api/v1/console/insurers/:code/credentials', adminOnly, { params: insurerCodeParams }, (request, reply) => {
    const { cabinetId } = consoleUser(request);
    if (!deleteInsurerCredentials(deps, cabinetId, request.params.code)) {
      throw new ApiError('insurer_credentials_missing', `No portal credentials for ${request.params.code} in this cabinet.`);
    }
    return reply.code(204).send();
  });

  route('POST', '/api/v1/console/insurers/:code/test-login', adminOnly, { params: insurerCodeParams }, (request): Promise<TestLoginResult> =>
    testInsurerLogin(deps, runtime, consoleUser(request).cabinetId, request.params.code),
  );

  // Products and pricing.

  route('GET', consolePaths.products, anyUser, {}, () => catalogue.listProducts(deps));

  route(
    'GET',
    '/api/v1/console/products/:code/schema',
    anyUser,
    { params: insurerCodeParams, querystring: getProductSchema.query },
    (request) => catalogue.productSchemaDocument(deps, request.params.code, request.query.compagnie),
  );

  route('POST', consolePaths.tarifications, anyUser, { body: tarificationRequestBody }, (request, reply) => {
    const { cabinetId } = consoleUser(request);
    const body = request.body;
    if (body.dry_run === true) return automation.dryRunWithDetails(deps, cabinetId, body, 'prod');
    const enqueued = automation.enqueueTarification(deps, cabinetId, body, 'prod');
    return reply.code(202).header('Location', consolePaths.job(enqueued.job_id)).send(enqueued);
  });

  // Jobs.

  route('GET', consolePaths.jobs, anyUser, { querystring: consoleJobsQuery }, (request) => {
    const { cabinetId } = consoleUser(request);
    const { status, from, to, cursor, limit } = request.query;
    return jobs.listJobsBetween(deps, cabinetId, { status, cursor, limit, from: instant(from, 'start'), to: instant(to, 'end') });
  });

  route('GET', '/api/v1/console/jobs/:job_id', anyUser, { params: jobIdParams }, (request) => jobs.getJob(deps, consoleUser(request).cabinetId, request.params.job_id));

  route('POST', '/api/v1/console/jobs/:job_id/cancel', anyUser, { params: jobIdParams }, (request) => {
    return automation.cancelJobAndRobot(deps, worker, consoleUser(request).cabinetId, request.params.job_id);
  });

  route('POST', '/api/v1/console/jobs/:job_id/mfa', anyUser, { params: jobIdParams, body: mfaCodeBody }, (request) => {
    const job = automation.giveMfaCode(deps, worker, consoleUser(request).cabinetId, request.params.job_id, request.body.code);
    request.log.info({ job_id: job.job_id }, 'MFA code given from the console');
    return job;
  });

  // A console showed the prompt to a person: mfa_required → awaiting_mfa (no change otherwise).
  route('POST', '/api/v1/console/jobs/:job_id/mfa/seen', anyUser, { params: jobIdParams }, (request) =>
    automation.acknowledgeMfaPrompt(deps, consoleUser(request).cabinetId, request.params.job_id),
  );

  // Admins only: the portal's pages, with the client's data, as the robot saw them.
  route('GET', '/api/v1/console/jobs/:job_id/artifacts/:name', adminOnly, { params: artifactParams }, (request, reply) => {
    const { job_id, name } = request.params;
    const file = artifacts.jobArtifactFile(deps, consoleUser(request).cabinetId, job_id, name, runtime.artifactsDir(job_id));
    return reply
      .type(name.endsWith('.png') ? 'image/png' : 'application/zip')
      .header('Content-Disposition', `${name.endsWith('.png') ? 'inline' : 'attachment'}; filename="${job_id}-${name}"`)
      .send(createReadStream(file));
  });

  route('GET', '/api/v1/console/devis/:devis_id/pdf', anyUser, { params: devisIdParams }, (request, reply) => {
    const { cabinetId } = consoleUser(request);
    const id = request.params.devis_id;
    const pdf = readDevisPdf(deps, cabinetId, id);
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="devis-${id}.pdf"`)
      .header('Cache-Control', 'private, no-store')
      .send(pdf);
  });

  registerJobEvents(app, deps);
}

/** A filter bound in epoch ms: a date means the start of that UTC day (from) or the end of it (to). */
function instant(value: string | undefined, bound: 'start' | 'end'): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return Date.parse(`${value}T00:00:00Z`) + (bound === 'end' ? 24 * 3600 * 1000 : 0);
  return Date.parse(value);
}
