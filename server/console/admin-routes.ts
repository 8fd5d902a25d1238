import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import {
  CONSOLE_API,
  createApiKeySchema,
  createUserBodySchema,
  grantIdParamsSchema,
  keyIdParamsSchema,
  killSwitchBodySchema,
  setupBodySchema,
  updateSettingsBodySchema,
  updateUserBodySchema,
  userIdParamsSchema,
  type ConsoleSettings,
  type SetupResponse,
  type SetupState,
} from '../../shared/console-admin.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../api-keys/service.js';
import { setKillSwitch } from '../automation/guards.js';
import { automationStatus } from '../automation/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../http/base-url.js';
import { toValidationIssues, validationError } from '../http/validation.js';
import { listConnectedApps, revokeConnectedApp } from '../oauth/service.js';
import { addCabinetUser, changeUserRole, describeUser, getCabinetSettings, listCabinetUsers, setLlmDataSharing, setupFirstCabinet, setupNeeded } from '../tenancy/service.js';
import { getWallet } from '../wallet/service.js';
import { consoleGuard, consoleUser } from './guard.js';
import { CONSOLE_HOME, startConsoleSession } from './routes.js';
import { describeSession, openSession } from './service.js';

type Part = 'body' | 'path';

/** A request part against its contract schema; a failure is the house 400 validation_error. */
function parse<T extends z.ZodType>(schema: T, value: unknown, part: Part): z.infer<T> {
  const parsed = schema.safeParse(value ?? undefined);
  if (!parsed.success) throw validationError(toValidationIssues(parsed.error, part));
  return parsed.data;
}

/** Console API of the admin slice: first-run setup, users, API keys, settings, wallet and status, connected apps. */
export async function adminConsoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const signedIn = consoleGuard(deps);
  const admin = consoleGuard(deps, { role: 'admin' });

  app.addHook('onSend', (_request, reply, payload, done) => {
    // Console answers are per user and often secret (a key's value): never cached.
    if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    done(null, payload);
  });

  // ---- First-run setup (no session: there is no user yet) ----

  app.get(`${CONSOLE_API}/setup`, async (): Promise<SetupState> => ({ needed: setupNeeded(deps) }));

  app.post(`${CONSOLE_API}/setup`, async (request, reply): Promise<SetupResponse> => {
    const body = parse(setupBodySchema, request.body, 'body');
    const { user_id } = await setupFirstCabinet(deps, body);
    const identity = describeUser(deps, user_id);
    if (!identity) throw new ApiError('internal_error', 'The new admin account cannot be read back.');
    // The admin just chose this password: signed in at once, without checking it again.
    const { token, user } = openSession(deps, identity);
    startConsoleSession(deps, request, reply, token, user);
    reply.code(201);
    return { session: describeSession(user), redirect_to: CONSOLE_HOME };
  });

  // ---- Users (admin) ----

  app.get(`${CONSOLE_API}/users`, { onRequest: admin }, async (request) => listCabinetUsers(deps, consoleUser(request).cabinetId));

  app.post(`${CONSOLE_API}/users`, { onRequest: admin }, async (request, reply) => {
    const body = parse(createUserBodySchema, request.body, 'body');
    const created = await addCabinetUser(deps, consoleUser(request).cabinetId, body);
    return reply.code(201).send(created);
  });

  app.patch(`${CONSOLE_API}/users/:id`, { onRequest: admin }, async (request) => {
    const { id } = parse(userIdParamsSchema, request.params, 'path');
    const { role } = parse(updateUserBodySchema, request.body, 'body');
    return changeUserRole(deps, consoleUser(request).cabinetId, id, role);
  });

  // ---- API keys (admin) ----

  app.get(`${CONSOLE_API}/keys`, { onRequest: admin }, async (request) => listApiKeys(deps, consoleUser(request).cabinetId));

  app.post(`${CONSOLE_API}/keys`, { onRequest: admin }, async (request, reply) => {
    const body = parse(createApiKeySchema, request.body, 'body');
    // The only time the key's value exists outside the caller: in this answer.
    return reply.code(201).send(createApiKey(deps, consoleUser(request).cabinetId, body));
  });

  app.delete(`${CONSOLE_API}/keys/:key_id`, { onRequest: admin }, async (request) => {
    const { key_id } = parse(keyIdParamsSchema, request.params, 'path');
    return revokeApiKey(deps, consoleUser(request).cabinetId, key_id);
  });

  // ---- Settings (read: any user; change: admin) ----

  const settings = (request: FastifyRequest): ConsoleSettings => ({
    ...getCabinetSettings(deps, consoleUser(request).cabinetId),
    public_base_url: publicBaseUrl(deps.config, request),
    public_base_url_source: deps.config.publicBaseUrl ? 'configured' : 'default',
    data_dir: deps.config.dataDir,
  });

  app.get(`${CONSOLE_API}/settings`, { onRequest: signedIn }, async (request) => settings(request));

  app.patch(`${CONSOLE_API}/settings`, { onRequest: admin }, async (request) => {
    const { llm_data_sharing } = parse(updateSettingsBodySchema, request.body, 'body');
    setLlmDataSharing(deps, consoleUser(request).cabinetId, llm_data_sharing);
    return settings(request);
  });

  // ---- Wallet and status (read: any user; kill switch: admin) ----

  const status = (request: FastifyRequest) => automationStatus(deps, consoleUser(request).cabinetId, request.server.robotWorker?.running() ?? 0);

  app.get(`${CONSOLE_API}/wallet`, { onRequest: signedIn }, async (request) => getWallet(deps, consoleUser(request).cabinetId));

  app.get(`${CONSOLE_API}/status`, { onRequest: signedIn }, async (request) => status(request));

  app.put(`${CONSOLE_API}/robots/kill-switch`, { onRequest: admin }, async (request) => {
    const { disabled, reason } = parse(killSwitchBodySchema, request.body, 'body');
    const user = consoleUser(request);
    setKillSwitch(deps, disabled ? (reason ?? `Switched off from the console by ${user.email}.`) : null);
    request.log.info({ robots_disabled: disabled, by: user.userId }, 'kill switch changed from the console');
    return status(request);
  });

  // ---- Connected apps (the signed-in user's own) ----

  app.get(`${CONSOLE_API}/connected-apps`, { onRequest: signedIn }, async (request) => listConnectedApps(deps, consoleUser(request)));

  app.delete(`${CONSOLE_API}/connected-apps/:grant_id`, { onRequest: signedIn }, async (request, reply) => {
    const { grant_id } = parse(grantIdParamsSchema, request.params, 'path');
    revokeConnectedApp(deps, consoleUser(request), grant_id);
    return reply.code(204).send();
  });
}
