import { createReadStream } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import {
  acknowledgeConsoleMfa,
  answerConsoleMfa,
  getConsoleMfaImage,
  cancelConsoleJob,
  getConsoleDevisPdf,
  getConsoleJob,
  getConsoleJobArtifact,
  getConsoleProductSchema,
  listConsoleJobs,
  listConsoleProducts,
  priceFromConsole,
  retryConsoleJob,
} from '../../shared/console-automation.js';
import {
  deleteInsurerCredentials,
  listInsurers,
  setInsurerCredentials,
  testInsurerLogin,
  type ConsoleInsurer,
  type LastLoginTest,
} from '../../shared/console-insurers.js';
import { getJobsDashboard } from '../../shared/console-dashboard.js';
import { pathTo } from '../../shared/endpoint.js';
import * as catalogue from '../automation/catalogue.js';
import * as consoleJobs from '../automation/console-jobs.js';
import { jobsDashboard } from '../automation/dashboard.js';
import * as jobs from '../automation/jobs.js';
import { testInsurerLogin as checkInsurerLogin, forgetLoginTest, lastLoginTests } from '../automation/login-check.js';
import * as artifacts from '../automation/artifacts.js';
import * as automation from '../automation/service.js';
import * as jobControls from '../automation/job-controls.js';
import type { RobotControl } from '../automation/robot-control.js';
import * as credentials from '../credentials/service.js';
import { recordAudit, requestActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import type { Insurer } from '../insurers/registry.js';
import { listInsurers as listInsurerPackages, type InsurerListing } from '../insurers/service.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import type { BrowserRuntime } from '../robots/browser.js';
import { consoleUser } from './guard.js';
import { devisPdfDownload } from './records.js';
import { registerJobEvents } from './job-events.js';

/** Console API of the automation slice: insurers and credentials, pricing, jobs with live events, MFA answers. */
export async function automationConsoleRoutes(
  app: FastifyInstance,
  { deps, worker, runtime }: { deps: Deps; worker: RobotControl; runtime: BrowserRuntime },
): Promise<void> {
  // Insurers and credentials.

  registerEndpoint(app, listInsurers, (request) => {
    const { cabinetId, role } = consoleUser(request);
    const tests = lastLoginTests(deps, cabinetId);
    const portalChanges = jobs.insurerPortalChanges(deps, cabinetId);
    // Version, source and signer as `courtier insurers list` gives them, so the two never disagree.
    const listing = listInsurerPackages(deps.insurers);
    const data = listing.insurers.flatMap((entry) => {
      const adapter = deps.insurers.get(entry.code);
      return adapter
        ? [
            consoleInsurer(deps, cabinetId, entry, adapter, {
              lastTest: tests.get(entry.code) ?? null,
              portalChanged: portalChanges.get(entry.code) ?? null,
            }),
          ]
        : [];
    });
    // Package names and paths on the service's computer are for whoever installs adapters.
    return { data, problems: role === 'admin' ? listing.problems : [] };
  });

  registerEndpoint(app, setInsurerCredentials, (request) => {
    const { cabinetId } = consoleUser(request);
    const saved = credentials.setInsurerCredentials(deps, cabinetId, request.params.code, request.body);
    // A test of the previous login says nothing of this one.
    forgetLoginTest(deps, cabinetId, request.params.code);
    request.log.info({ compagnie: request.params.code }, 'insurer credentials set from the console');
    recordAudit(deps, {
      cabinetId,
      action: 'insurer_credentials.set',
      actor: requestActor(request),
      target: request.params.code,
      details: { login: saved.login },
    });
    return saved;
  });

  registerEndpoint(app, deleteInsurerCredentials, (request, reply) => {
    const { cabinetId } = consoleUser(request);
    if (!credentials.deleteInsurerCredentials(deps, cabinetId, request.params.code)) {
      throw new ApiError('insurer_credentials_missing', `No portal credentials for ${request.params.code} in this cabinet.`);
    }
    forgetLoginTest(deps, cabinetId, request.params.code);
    recordAudit(deps, { cabinetId, action: 'insurer_credentials.deleted', actor: requestActor(request), target: request.params.code });
    return reply.code(204).send();
  });

  registerEndpoint(app, testInsurerLogin, (request) =>
    checkInsurerLogin(deps, runtime, request.log, consoleUser(request).cabinetId, request.params.code),
  );

  // Products and pricing.

  registerEndpoint(app, listConsoleProducts, () => catalogue.listProducts(deps));

  registerEndpoint(app, getConsoleProductSchema, (request) =>
    catalogue.productSchemaDocument(deps, request.params.code, request.query.compagnie),
  );

  registerEndpoint(app, priceFromConsole, (request) => {
    const { cabinetId } = consoleUser(request);
    const body = request.body;
    if (body.dry_run === true) return automation.dryRunWithDetails(deps, cabinetId, body, 'prod');
    const enqueued = automation.enqueueTarification(deps, cabinetId, body, 'prod');
    return respond(202, enqueued, { Location: pathTo(getConsoleJob, { job_id: enqueued.job_id }) });
  });

  // Jobs.

  registerEndpoint(app, listConsoleJobs, (request) => {
    const { cabinetId } = consoleUser(request);
    const { status, from, to, q, cursor, limit } = request.query;
    return consoleJobs.listConsoleJobs(deps, cabinetId, { status, cursor, limit, from: instant(from, 'start'), to: instant(to, 'end'), q });
  });

  registerEndpoint(app, getJobsDashboard, (request) => jobsDashboard(deps, consoleUser(request).cabinetId, request.query.days));

  registerEndpoint(app, getConsoleJob, (request) =>
    consoleJobs.getConsoleJobDetail(deps, consoleUser(request).cabinetId, request.params.job_id),
  );

  registerEndpoint(app, retryConsoleJob, (request) => {
    const { cabinetId } = consoleUser(request);
    const enqueued = consoleJobs.retryJob(deps, cabinetId, request.params.job_id);
    request.log.info({ job_id: enqueued.job_id, retry_of: request.params.job_id }, 'job retried from the console');
    return respond(202, enqueued, { Location: pathTo(getConsoleJob, { job_id: enqueued.job_id }) });
  });

  registerEndpoint(app, cancelConsoleJob, (request) => {
    const { cabinetId } = consoleUser(request);
    const job = jobControls.cancelJobAndRobot(deps, worker, cabinetId, request.params.job_id);
    return consoleJobs.getConsoleJob(deps, cabinetId, job.job_id);
  });

  registerEndpoint(app, answerConsoleMfa, (request) => {
    const { cabinetId } = consoleUser(request);
    const job = jobControls.giveMfaCode(deps, worker, cabinetId, request.params.job_id, request.body);
    request.log.info({ job_id: job.job_id }, 'MFA code given from the console');
    return consoleJobs.getConsoleJob(deps, cabinetId, job.job_id);
  });

  registerEndpoint(app, getConsoleMfaImage, (request, reply) => {
    const image = jobControls.mfaImage(deps, worker, consoleUser(request).cabinetId, request.params.job_id);
    return reply.type(image.mime).header('Cache-Control', 'no-store').send(image.data);
  });

  registerEndpoint(app, acknowledgeConsoleMfa, (request) => {
    const { cabinetId } = consoleUser(request);
    const job = jobControls.acknowledgeMfaPrompt(deps, cabinetId, request.params.job_id);
    return consoleJobs.getConsoleJob(deps, cabinetId, job.job_id);
  });

  // Admins only: the portal's pages, with the client's data, as the robot saw them.
  registerEndpoint(app, getConsoleJobArtifact, (request, reply) => {
    const { job_id, name } = request.params;
    const file = artifacts.jobArtifactFile(deps, consoleUser(request).cabinetId, job_id, name, runtime.artifactsDir(job_id));
    return reply
      .type(artifacts.artifactContentType(name))
      .header('Content-Disposition', `${name.endsWith('.png') ? 'inline' : 'attachment'}; filename="${job_id}-${name}"`)
      .send(createReadStream(file));
  });

  registerEndpoint(app, getConsoleDevisPdf, (request, reply) => {
    const { cabinetId } = consoleUser(request);
    // Named after the client, the product and the day (ASCII, no path characters): devisPdfFileName.
    const { pdf, fileName } = devisPdfDownload(deps, cabinetId, request.params.devis_id);
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="${fileName}"`)
      .header('Cache-Control', 'private, no-store')
      .send(pdf);
  });

  registerJobEvents(app, deps);
}

/** One insurer on the Insurers page: its listing, then what this cabinet has set up for it. */
function consoleInsurer(
  deps: Deps,
  cabinetId: string,
  entry: InsurerListing,
  adapter: Insurer,
  { lastTest, portalChanged }: { lastTest: LastLoginTest | null; portalChanged: ConsoleInsurer['portal_changed'] },
): ConsoleInsurer {
  const { code, name, version, source, signed } = entry;
  return {
    code,
    name,
    version,
    source,
    signed,
    products: adapter.products.map((p) => ({ code: p.code, label: p.label, kind: p.kind, cost_credits: catalogue.costOf(deps, p) })),
    credentials: credentials.describeInsurerCredentials(deps, cabinetId, code),
    demo_login: adapter.testKeys
      ? { login: adapter.testKeys.demoCredentials.login, password: adapter.testKeys.demoCredentials.password }
      : null,
    can_test_login: typeof adapter.verifyLogin === 'function',
    last_login_test: lastTest,
    portal_changed: portalChanged,
  };
}

/** A filter bound in epoch ms: a date means the start of that UTC day (from) or the end of it (to). */
function instant(value: string | undefined, bound: 'start' | 'end'): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return Date.parse(`${value}T00:00:00Z`) + (bound === 'end' ? 24 * 3600 * 1000 : 0);
  return Date.parse(value);
}
