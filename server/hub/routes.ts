import type { FastifyInstance, FastifyReply } from 'fastify';
import { HUB_API_PREFIX } from '../../shared/endpoint.js';
import { exchangeWallet, MAX_WALLET_BYTES } from '../../shared/sync-wallet.js';
import {
  getBlob,
  getHubHealth,
  getHubOpenApiDocument,
  MAX_BLOB_BYTES,
  MAX_PUSH_BYTES,
  pullChanges,
  pushChanges,
  putBlob,
} from '../../shared/sync-protocol.js';
import { leaveHub, pairDevice } from '../../shared/sync-pairing.js';
import { getState } from '../../shared/sync-state.js';
import { BINARY_TYPE, registerEndpoint, respond } from '../platform/http/endpoint.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import { revokeHubDevice } from './admin.js';
import { recordHubAudit } from './audit.js';
import { readBlob, storeBlob } from './blobs.js';
import { pullChanges as pull } from './pull.js';
import { pushChanges as push } from './push.js';
import { hubTime, type HubDeps } from './deps.js';
import { callerOf } from './devices.js';
import { pair, pairingRefusedFrom } from './pairing.js';
import { readDeviceTime, readProtocol } from './protocol.js';
import { readState } from './state.js';
import { exchangeWallet as exchange } from './wallet.js';
import type { ChangeWaiters } from './waiters.js';

/** Every route of the hub, in the order its OpenAPI document lists them. */
export const HUB_ENDPOINTS = [
  pairDevice,
  pushChanges,
  pullChanges,
  getState,
  exchangeWallet,
  leaveHub,
  putBlob,
  getBlob,
  getHubHealth,
  getHubOpenApiDocument,
] as const;

/** An AbortSignal that fires when the client goes away before its answer is sent (a long poll's end). */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) controller.abort();
  });
  return controller.signal;
}

/** The hub's routes, each from its line in shared/sync-protocol.ts. */
export async function hubRoutes(app: FastifyInstance, { deps, waiters }: { deps: HubDeps; waiters: ChangeWaiters }): Promise<void> {
  registerEndpoint(
    app,
    pairDevice,
    async (request) =>
      respond(201, await pair(deps, { body: request.body, protocol: readProtocol(request.headers, deps.protocol), address: request.ip })),
    {
      // Anyone may call it: the app's small body limit (a code, a device name and a cabinet's id and
      // name are a few hundred bytes), and an address over its limit is refused before the body is read.
      onRequest: (request, _reply, done) => {
        pairingRefusedFrom(deps, request.ip).then((refused) => done(refused ?? undefined), done);
      },
    },
  );

  registerEndpoint(
    app,
    pushChanges,
    (request) =>
      push(
        deps,
        callerOf(request),
        {
          changes: request.body.changes,
          protocol: readProtocol(request.headers, deps.protocol),
          deviceTime: readDeviceTime(request.headers),
        },
        request.log,
      ),
    { bodyLimit: MAX_PUSH_BYTES },
  );

  registerEndpoint(
    app,
    exchangeWallet,
    (request) =>
      exchange(deps, callerOf(request), { ...request.body, protocol: readProtocol(request.headers, deps.protocol) }, request.log),
    {
      bodyLimit: MAX_WALLET_BYTES,
    },
  );

  registerEndpoint(app, leaveHub, async (request) => {
    const caller = callerOf(request);
    const left = await revokeHubDevice(deps, caller.deviceId, caller.cabinetId);
    await recordHubAudit(deps, {
      action: 'hub.device_left',
      actor: { kind: 'device', id: caller.deviceId, label: left.name, address: request.ip },
      cabinetId: caller.cabinetId,
      target: caller.deviceId,
    });
    return { device_id: left.device_id, revoked_at: left.revoked_at, hub_time: hubTime(deps) };
  });

  registerEndpoint(app, pullChanges, async (request, reply) => {
    const answer = await pull(
      deps,
      waiters,
      callerOf(request),
      { ...request.query, protocol: readProtocol(request.headers, deps.protocol) },
      clientGone(reply),
    );
    return reply.type('application/json; charset=utf-8').send(answer);
  });

  registerEndpoint(app, getState, async (request, reply) => {
    const { after_kind: afterKind, after_id: afterId, limit, kind, record_id: recordId } = request.query;
    const only = kind !== undefined && recordId !== undefined ? { kind, recordId } : undefined;
    const answer = await readState(deps, callerOf(request), {
      afterKind,
      afterId,
      limit,
      only,
      protocol: readProtocol(request.headers, deps.protocol),
    });
    return reply.type('application/json; charset=utf-8').send(answer);
  });

  await app.register(async (blobs) => {
    // Raw bytes for these routes only (elsewhere they are 415), up to a PDF's limit, above the JSON one.
    blobs.addContentTypeParser(BINARY_TYPE, { parseAs: 'buffer', bodyLimit: MAX_BLOB_BYTES }, (_request, body, done) => done(null, body));
    registerEndpoint(blobs, putBlob, (request) => storeBlob(deps, callerOf(request).cabinetId, request.params.sha256, request.body), {
      bodyLimit: MAX_BLOB_BYTES,
    });
    registerEndpoint(blobs, getBlob, async (request, reply) =>
      reply.type('application/pdf').send(await readBlob(deps, callerOf(request).cabinetId, request.params.sha256)),
    );
  });

  registerEndpoint(app, getHubHealth, () => ({ status: 'ok' as const, version: deps.version }));

  // Built once: the contract does not change while the hub runs.
  const document = buildOpenApiDocument(HUB_ENDPOINTS, {
    version: deps.version,
    title: 'Courtier sync hub',
    description:
      'The hub the installs of a cabinet sync through (`courtier hub serve`): pairing, pushing and pulling changes, quote PDFs. ' +
      'Devices authenticate with Authorization: Bearer <device id>.<secret>. Errors are JSON objects {error, message, details?, request_id}; `error` is a stable code (see x-error-codes). ' +
      'Every answer carries X-Courtier-Hub-Time (ms since the epoch).',
    serverUrl: HUB_API_PREFIX,
    security: [{ SyncDevice: [] }],
  });
  registerEndpoint(app, getHubOpenApiDocument, () => document);
}
