import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import {
  CONSOLE_API,
  createApiKeySchema,
  createUserBodySchema,
  grantIdParamsSchema,
  keyIdParamsSchema,
  robotPauseBodySchema,
  setupBodySchema,
  updateSettingsBodySchema,
  updateUserBodySchema,
  userIdParamsSchema,
  type ConsoleSettings,
  type SetupResponse,
  type SetupState,
} from '../../shared/console-admin.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../api-keys/service.js';
import { setRobotPause } from '../automation/guards.js';
import { automationStatus } from '../automation/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../http/base-url.js';
import { isFromThisMachine } from '../http/client-address.js';
import { listConnectedApps, revokeConnectedApp } from '../oauth/connected-apps.js';
import { addCabinetUser, changeUserRole, describeUser, getCabinetSettings, listCabinetUsers, setLlmDataSharing, setupFirstCabinet, setupNeeded } from '../tenancy/service.js';
import { getWallet } from '../wallet/service.js';
import { consoleGuard, consoleUser } from './guard.js';
import { CONSOLE_HOME, startConsoleSession } from './routes.js';
import { describeSession, openSession } from './service.js';

/** Console API of the admin slice: first-run setup, users, API keys, settings, wallet and status, connected apps. */
export async function adminConsoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const signedIn = consoleGuard(deps);
  const admin = consoleGuard(deps, { role: 'admin' });

  // ---- First-run setup (no session: there is no user yet) ----

  app.get(`${CONSOLE_API}/setup`, async (request, reply): Promise<SetupState> => {
    reply.header('Cache-Control', 'no-store');
    return { needed: setupNeeded(deps), allowed_here: isFromThisMachine(request) };
  });

  // Whoever sets up first owns the install: on a LAN listener that must not be a neighbour, so
  // only a person at this machine may (the TCP peer decides, never a forwarded header). Checked
  // before the body is even read.
  const thisMachineOnly = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    if (isFromThisMachine(request)) return done();
    const port = request.socket.localPort ?? deps.config.port;
    done(
      new ApiError(
        'setup_local_only',
        `First-run setup can only be done on the machine that runs Courtier, so that nobody else on the network can claim it: open http://127.0.0.1:${port}/console/ on that machine.`,
      ),
    );
  };

  // Route schemas are checked by the zod-validation plugin (a 400 validation_error), after the guard.
  app.post<{ Body: z.output<typeof setupBodySchema> }>(`${CONSOLE_API}/setup`, { onRequest: thisMachineOnly, schema: { body: setupBodySchema } }, async (request, reply): Promise<SetupResponse> => {
    const { user_id } = await setupFirstCabinet(deps, request.body);
    const identity = describeUser(deps, user_id);
    if (!identity) throw new ApiError('internal_error', 'The new admin account cannot be read back.');
    // The admin just chose this password: signed in at once, without checking it again.
    const { token, user } = openSession(deps, identity);
    startConsoleSession(deps, request, reply, token, user);
    reply.code(201).header('Cache-Control', 'no-store');
    return { session: describeSession(user), redirect_to: CONSOLE_HOME };
  });

  // ---- Users (admin) ----

  app.get(`${CONSOLE_API}/users`, { onRequest: admin }, async (request) => listCabinetUsers(deps, consoleUser(request).cabinetId));

  app.post<{ Body: z.output<typeof createUserBodySchema> }>(`${CONSOLE_API}/users`, { onRequest: admin, schema: { body: createUserBodySchema } }, async (request, reply) => {
    const created = await addCabinetUser(deps, consoleUser(request).cabinetId, request.body);
    return reply.code(201).send(created);
  });

  app.patch<{ Params: z.output<typeof userIdParamsSchema>; Body: z.output<typeof updateUserBodySchema> }>(
    `${CONSOLE_API}/users/:id`,
    { onRequest: admin, schema: { params: userIdParamsSchema, body: updateUserBodySchema } },
    async (request) => changeUserRole(deps, consoleUser(request).cabinetId, request.params.id, request.body.role),
  );

  // ---- API keys (admin) ----

  app.get(`${CONSOLE_API}/keys`, { onRequest: admin }, async (request) => listApiKeys(deps, consoleUser(request).cabinetId));

  app.post<{ Body: z.output<typeof createApiKeySchema> }>(`${CONSOLE_API}/keys`, { onRequest: admin, schema: { body: createApiKeySchema } }, async (request, reply) => {
    // The only time the key's value exists outside the caller: in this answer.
    return reply.code(201).send(createApiKey(deps, consoleUser(request).cabinetId, request.body));
  });

  app.delete<{ Params: z.output<typeof keyIdParamsSchema> }>(`${CONSOLE_API}/keys/:key_id`, { onRequest: admin, schema: { params: keyIdParamsSchema } }, async (request) => {
    return revokeApiKey(deps, consoleUser(request).cabinetId, request.params.key_id);
  });

  // ---- Settings (read: any user; change: admin) ----

  const settings = (request: FastifyRequest): ConsoleSettings => ({
    ...getCabinetSettings(deps, consoleUser(request).cabinetId),
    public_base_url: publicBaseUrl(deps.config, request),
    public_base_url_source: deps.config.publicBaseUrl ? 'configured' : 'default',
    data_dir: deps.config.dataDir,
  });

  app.get(`${CONSOLE_API}/settings`, { onRequest: signedIn }, async (request) => settings(request));

  app.patch<{ Body: z.output<typeof updateSettingsBodySchema> }>(`${CONSOLE_API}/settings`, { onRequest: admin, schema: { body: updateSettingsBodySchema } }, async (request) => {
    setLlmDataSharing(deps, consoleUser(request).cabinetId, request.body.llm_data_sharing);
    return settings(request);
  });

  // ---- Wallet and status (read: any user; the cabinet's robot pause: admin) ----

  const status = (request: FastifyRequest) => automationStatus(deps, consoleUser(request).cabinetId, request.server.robotWorker?.running() ?? 0);

  app.get(`${CONSOLE_API}/wallet`, { onRequest: signedIn }, async (request) => getWallet(deps, consoleUser(request).cabinetId));

  app.get(`${CONSOLE_API}/status`, { onRequest: signedIn }, async (request) => status(request));

  // This cabinet only: the install-wide kill switch is the operator's, never a cabinet admin's.
  app.put<{ Body: z.output<typeof robotPauseBodySchema> }>(`${CONSOLE_API}/robots/pause`, { onRequest: admin, schema: { body: robotPauseBodySchema } }, async (request) => {
    const { paused, reason } = request.body;
    const user = consoleUser(request);
    setRobotPause(deps, user.cabinetId, paused ? { reason, by: user } : null);
    request.log.info({ robots_paused: paused, cabinet_id: user.cabinetId, by: user.userId }, 'cabinet robots paused or resumed from the console');
    return status(request);
  });

  // ---- Connected apps (the signed-in user's own) ----

  app.get(`${CONSOLE_API}/connected-apps`, { onRequest: signedIn }, async (request) => listConnectedApps(deps, consoleUser(request)));

  app.delete<{ Params: z.output<typeof grantIdParamsSchema> }>(
    `${CONSOLE_API}/connected-apps/:grant_id`,
    { onRequest: signedIn, schema: { params: grantIdParamsSchema } },
    async (request, reply) => {
      revokeConnectedApp(deps, consoleUser(request), request.params.grant_id);
      return reply.code(204).send();
    },
  );
}
