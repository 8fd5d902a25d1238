import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import {
  createKey,
  createUser,
  getConsoleStatus,
  getConsoleWallet,
  getSettings,
  listConnectedApps,
  listKeys,
  listUsers,
  revokeConnectedApp,
  revokeKey,
  setRobotPause,
  grantConsoleCredits,
  updateSettings,
  updateUser,
  type ConsoleSettings,
} from '../../shared/console-admin.js';
import { getSetupState, runSetup } from '../../shared/console-session.js';
import { CONSOLE_HOME } from '../../shared/console-pages.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../api-keys/service.js';
import { setRobotPause as pauseRobots } from '../automation/guards.js';
import { automationStatus } from '../automation/service.js';
import type { AuditAction } from '../../shared/audit.js';
import { recordAudit, requestActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../platform/http/base-url.js';
import { isFromThisMachine } from '../platform/http/client-address.js';
import { atomically } from '../platform/db/atomically.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import { listConnectedApps as connectedAppsOf, revokeConnectedApp as disconnectApp } from '../oauth/connected-apps.js';
import {
  describeUser,
  getCabinetSettings,
  changeLlmDataSharing,
  changeCabinetIdentity,
  changeUnattendedHumanSteps,
  setupFirstCabinet,
  setupNeeded,
} from '../tenancy/service.js';
import { addCabinetUser, changeUserRole, listCabinetUsers } from '../tenancy/users.js';
import { grantCredits } from '../wallet/service.js';
import { consoleUser } from './guard.js';
import { describeWallet } from './records.js';
import { startConsoleSession } from './routes.js';
import { describeSession, openSession } from './service.js';

/** Console API of the admin slice: first-run setup, users, API keys, settings, wallet and status, connected apps. */
export async function adminConsoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const cabinetOf = (request: FastifyRequest) => consoleUser(request).cabinetId;
  const audit = (request: FastifyRequest, action: AuditAction, target: string | null, details: Record<string, unknown> = {}) =>
    recordAudit(deps, { cabinetId: cabinetOf(request), action, actor: requestActor(request), target, details });

  // ---- First-run setup (no session: there is no user yet) ----

  registerEndpoint(app, getSetupState, (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    return { needed: setupNeeded(deps), allowed_here: isFromThisMachine(request) };
  });

  // Whoever sets up first owns the install: on a LAN listener that must not be a neighbour, so
  // only a person at this machine may (the TCP peer decides, never a forwarded header). Checked
  // before the body is even read.
  const thisMachineOnly: onRequestHookHandler = (request, _reply, done) => {
    if (isFromThisMachine(request)) return done();
    const port = request.socket.localPort ?? deps.config.port;
    done(
      new ApiError(
        'setup_local_only',
        `First-run setup can only be done on the machine that runs Courtier, so that nobody else on the network can claim it: open http://127.0.0.1:${port}/console/ on that machine.`,
      ),
    );
  };

  registerEndpoint(
    app,
    runSetup,
    async (request, reply) => {
      const { user_id } = await setupFirstCabinet(deps, request.body);
      const identity = describeUser(deps, user_id);
      if (!identity) throw new ApiError('internal_error', 'The new admin account cannot be read back.');
      // The admin just chose this password: signed in at once, without checking it again.
      const { token, user } = openSession(deps, identity);
      startConsoleSession(deps, request, reply, token, user);
      return respond(201, { session: describeSession(user), redirect_to: CONSOLE_HOME }, { 'Cache-Control': 'no-store' });
    },
    { onRequest: thisMachineOnly },
  );

  // ---- Users (admin) ----

  registerEndpoint(app, listUsers, (request) => listCabinetUsers(deps, cabinetOf(request)));
  registerEndpoint(app, createUser, async (request) => {
    const user = await addCabinetUser(deps, cabinetOf(request), request.body);
    audit(request, 'user.created', user.email, { user_id: user.user_id, role: user.role });
    return respond(201, user);
  });
  registerEndpoint(app, updateUser, (request) => {
    const user = changeUserRole(deps, cabinetOf(request), request.params.id, request.body.role);
    audit(request, 'user.role_changed', user.email, { user_id: user.user_id, role: user.role });
    return user;
  });

  // ---- API keys (admin) ----

  registerEndpoint(app, listKeys, (request) => listApiKeys(deps, cabinetOf(request)));
  // The only time the key's value exists outside the caller: in this answer.
  registerEndpoint(app, createKey, (request) => {
    const key = createApiKey(deps, cabinetOf(request), request.body);
    audit(request, 'api_key.created', key.key_id, { name: key.name, environment: key.environment, scopes: key.scopes });
    return respond(201, key);
  });
  registerEndpoint(app, revokeKey, (request) => {
    const key = revokeApiKey(deps, cabinetOf(request), request.params.key_id);
    audit(request, 'api_key.revoked', key.key_id, { name: key.name });
    return key;
  });

  // ---- Settings (read: any user; change: admin) ----

  const settings = (request: FastifyRequest): ConsoleSettings => ({
    ...getCabinetSettings(deps, cabinetOf(request)),
    public_base_url: publicBaseUrl(deps.config, request),
    public_base_url_source: deps.config.publicBaseUrl ? 'configured' : 'default',
    data_dir: deps.config.dataDir,
  });

  registerEndpoint(app, getSettings, (request) => settings(request));
  registerEndpoint(app, updateSettings, (request) => {
    const { llm_data_sharing, unattended_human_steps, orias, address } = request.body;
    if (llm_data_sharing !== undefined) changeLlmDataSharing(deps, cabinetOf(request), llm_data_sharing, requestActor(request));
    if (unattended_human_steps !== undefined)
      changeUnattendedHumanSteps(deps, cabinetOf(request), unattended_human_steps, requestActor(request));
    if (orias !== undefined || address !== undefined)
      changeCabinetIdentity(
        deps,
        cabinetOf(request),
        { ...(orias !== undefined ? { orias } : {}), ...(address !== undefined ? { address } : {}) },
        requestActor(request),
      );
    return settings(request);
  });

  // ---- Wallet and status (read: any user; the cabinet's robot pause: admin) ----

  const status = (request: FastifyRequest) => automationStatus(deps, cabinetOf(request), request.server.robotWorker?.running() ?? 0);

  registerEndpoint(app, getConsoleWallet, (request) => describeWallet(deps, cabinetOf(request)));
  registerEndpoint(app, grantConsoleCredits, (request) => {
    const cabinetId = cabinetOf(request);
    const { amount, note } = request.body;
    const balance = atomically(deps.db, () => {
      const after = grantCredits(deps, cabinetId, amount, note);
      recordAudit(deps, { cabinetId, action: 'credits.granted', actor: requestActor(request), details: { amount, balance: after, note } });
      return after;
    });
    return respond(201, { granted: amount, balance });
  });
  registerEndpoint(app, getConsoleStatus, (request) => status(request));

  // This cabinet only: the install-wide kill switch is the operator's, never a cabinet admin's.
  registerEndpoint(app, setRobotPause, (request) => {
    const { paused, reason } = request.body;
    const user = consoleUser(request);
    pauseRobots(deps, user.cabinetId, paused ? { reason, by: user } : null);
    audit(request, paused ? 'robots.paused' : 'robots.resumed', null, paused && reason ? { reason } : {});
    request.log.info(
      { robots_paused: paused, cabinet_id: user.cabinetId, by: user.userId },
      'cabinet robots paused or resumed from the console',
    );
    return status(request);
  });

  // ---- Connected apps (the signed-in user's own) ----

  registerEndpoint(app, listConnectedApps, (request) => connectedAppsOf(deps, consoleUser(request)));
  registerEndpoint(app, revokeConnectedApp, (request, reply) => {
    disconnectApp(deps, consoleUser(request), request.params.grant_id);
    audit(request, 'oauth.grant_revoked', request.params.grant_id);
    return reply.code(204).send();
  });
}
