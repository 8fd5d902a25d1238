import { randomUUID } from 'node:crypto';
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
  type ConsoleDryRun,
  type ConsoleInsurer,
  type TestLoginResult,
} from '../../shared/console-automation.js';
import * as catalogue from '../automation/catalogue.js';
import * as automation from '../automation/service.js';
import type { Worker } from '../automation/worker.js';
import { deleteInsurerCredentials, describeInsurerCredentials, readInsurerCredentials, setInsurerCredentials } from '../credentials/service.js';
import type { Deps } from '../deps.js';
import { readDevisPdf } from '../devis/service.js';
import { ApiError } from '../errors.js';
import { RobotError, type InsurerAdapter, type RobotContext } from '../robots/adapter.js';
import type { BrowserRuntime } from '../robots/browser.js';
import { creditBalance } from '../wallet/service.js';
import { consoleGuard, consoleUser } from './guard.js';
import { registerJobEvents } from './job-events.js';

/** A login check gives up after this long (the portal's own timeouts are shorter). */
const LOGIN_CHECK_TIMEOUT_MS = 60_000;

type Schemas = { body?: z.ZodType; querystring?: z.ZodType; params?: z.ZodType };
type Parsed<S extends Schemas> = FastifyRequest<{
  Body: S['body'] extends z.ZodType ? z.output<S['body']> : undefined;
  Querystring: S['querystring'] extends z.ZodType ? z.output<S['querystring']> : undefined;
  Params: S['params'] extends z.ZodType ? z.output<S['params']> : undefined;
}>;

/** Console API of the automation slice: insurers and credentials, pricing, jobs with live events, MFA answers. */
export async function automationConsoleRoutes(app: FastifyInstance, { deps, worker, runtime }: { deps: Deps; worker: Worker; runtime: BrowserRuntime }): Promise<void> {
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

  route('POST', '/api/v1/console/insurers/:code/test-login', adminOnly, { params: insurerCodeParams }, async (request): Promise<TestLoginResult> => {
    const { cabinetId } = consoleUser(request);
    const { code } = request.params;
    const adapter = deps.insurers.get(code);
    if (!adapter) throw new ApiError('unknown_insurer', `No insurer with code ${code}.`);
    const credentials = readInsurerCredentials(deps, cabinetId, code);
    if (!credentials) throw new ApiError('insurer_credentials_missing', `No portal credentials for ${adapter.name} in this cabinet: set them first.`);
    if (!adapter.verifyLogin) return { ok: false, code: 'not_supported', message: `The ${adapter.name} robot cannot check a login on its own.` };
    if (automation.insurerLoginBusy(deps, cabinetId, code)) {
      throw new ApiError('insurer_login_busy', `A robot is logged in to ${adapter.name} with this account right now; test the login once its job has finished.`);
    }
    return checkLogin(adapter.verifyLogin.bind(adapter), credentials);
  });

  /** Runs the robot's login step in its own browser context, like a job's, and reports what the portal said. */
  async function checkLogin(verify: NonNullable<InsurerAdapter['verifyLogin']>, credentials: RobotContext['credentials']): Promise<TestLoginResult> {
    const id = `login-check-${randomUUID()}`;
    const session = runtime.session(id);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), LOGIN_CHECK_TIMEOUT_MS);
    const ctx: RobotContext = {
      jobId: id,
      credentials,
      signal: controller.signal,
      openPage: () => session.openPage(),
      progress: () => undefined,
      markSubmitted: () => undefined,
      requestMfa: () => Promise.reject(new RobotError('technical', 'mfa_not_available', 'A login check does not ask for codes.')),
    };
    try {
      const check = await verify(ctx);
      return { ok: true, mfa_required: check.mfa };
    } catch (err) {
      if (err instanceof RobotError) return { ok: false, code: err.code, message: err.message };
      return { ok: false, code: 'robot_crashed', message: `The robot stopped unexpectedly: ${String((err as Error)?.message ?? err).split('\n')[0]}` };
    } finally {
      clearTimeout(timer);
      await session.finish(false);
    }
  }

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
    if (body.dry_run === true) {
      const result = automation.dryRunTarification(deps, cabinetId, body, 'prod');
      const { product } = automation.robotFor(deps, body, 'prod');
      const check = catalogue.checkDicData(product, body.dicData);
      const invalid = check.issues
        .map((issue) => ({ ...issue, field: issue.path.split('.')[2] ?? '' }))
        .filter((issue) => !check.missing.includes(issue.field));
      const answer: ConsoleDryRun = { ...result, invalid_fields: invalid, balance: creditBalance(deps, cabinetId) };
      return answer;
    }
    const enqueued = automation.enqueueTarification(deps, cabinetId, body, 'prod');
    worker.wake();
    return reply.code(202).header('Location', consolePaths.job(enqueued.job_id)).send(enqueued);
  });

  // Jobs.

  route('GET', consolePaths.jobs, anyUser, { querystring: consoleJobsQuery }, (request) => {
    const { cabinetId } = consoleUser(request);
    const { status, from, to, cursor, limit } = request.query;
    return automation.listJobsBetween(deps, cabinetId, { status, cursor, limit, from: instant(from, 'start'), to: instant(to, 'end') });
  });

  route('GET', '/api/v1/console/jobs/:job_id', anyUser, { params: jobIdParams }, (request) => automation.getJob(deps, consoleUser(request).cabinetId, request.params.job_id));

  route('POST', '/api/v1/console/jobs/:job_id/cancel', anyUser, { params: jobIdParams }, (request) => {
    const { job, wasActive } = automation.cancelJob(deps, consoleUser(request).cabinetId, request.params.job_id);
    if (wasActive) worker.abort(job.job_id);
    return job;
  });

  route('POST', '/api/v1/console/jobs/:job_id/mfa', anyUser, { params: jobIdParams, body: mfaCodeBody }, (request) => {
    const { cabinetId } = consoleUser(request);
    const job = automation.getJob(deps, cabinetId, request.params.job_id);
    if (!worker.answerMfa(cabinetId, job.job_id, request.body.code)) {
      throw new ApiError('job_not_awaiting_mfa', `The job is ${job.status}, not waiting for a code.`, { status: job.status });
    }
    request.log.info({ job_id: job.job_id }, 'MFA code given from the console');
    return automation.getJob(deps, cabinetId, job.job_id);
  });

  // A console showed the prompt to a person: mfa_required → awaiting_mfa (no change otherwise).
  route('POST', '/api/v1/console/jobs/:job_id/mfa/seen', anyUser, { params: jobIdParams }, (request) =>
    automation.acknowledgeMfaPrompt(deps, consoleUser(request).cabinetId, request.params.job_id),
  );

  route('GET', '/api/v1/console/jobs/:job_id/artifacts/:name', anyUser, { params: artifactParams }, (request, reply) => {
    const { job_id, name } = request.params;
    const file = automation.jobArtifactFile(deps, consoleUser(request).cabinetId, job_id, name, runtime.artifactsDir(job_id));
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
