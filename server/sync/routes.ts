import { hostname } from 'node:os';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { connectSync, disconnectSync, getSyncStatus, listSyncConflicts, pauseSync, resumeSync } from '../../shared/sync.js';
import { PAIRING_REFUSALS } from '../../shared/sync-protocol.js';
import { consoleUser } from '../console/guard.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { registerEndpoint } from '../http/endpoint.js';
import type { RecordsByKind } from './apply.js';
import { HubRefusal, HubUnreachable, type HubFetch } from './hub-client.js';
import { auditConnected, connectCabinet, disconnectCabinet, listSyncConflicts as setAsideChanges, setSyncPaused, syncStatus } from './service.js';
import { recordAudit, requestActor } from '../audit/service.js';
import type { ErrorCode } from '../../shared/errors.js';

/** The hub's refusals of a pairing, shown by the console as they are (each has its words in both languages). */
const isPairingRefusal = (code: string): code is ErrorCode => (PAIRING_REFUSALS as readonly string[]).includes(code);

/** A hub's refusal or silence, as the console's error: the hub's own code and words when it gave them. */
function asApiError(err: unknown): unknown {
  if (err instanceof HubUnreachable) return new ApiError('hub_unreachable', `${err.message}.`);
  if (err instanceof HubRefusal && isPairingRefusal(err.code)) return new ApiError(err.code, err.message);
  if (err instanceof HubRefusal) return new ApiError('hub_unreachable', `The hub refused the pairing: ${err.message}`);
  return err;
}

/** The console's Sync page: the state for everyone, connect/pause/resume/disconnect for administrators. */
export async function syncConsoleRoutes(app: FastifyInstance, { deps, records, fetch }: { deps: Deps; records: RecordsByKind; fetch: HubFetch }): Promise<void> {
  const cabinetOf = (request: FastifyRequest) => consoleUser(request).cabinetId;

  registerEndpoint(app, getSyncStatus, (request) => syncStatus(deps, cabinetOf(request)));
  registerEndpoint(app, listSyncConflicts, (request) => ({ data: setAsideChanges(deps, cabinetOf(request), 100) }));

  registerEndpoint(app, connectSync, async (request) => {
    const cabinetId = cabinetOf(request);
    const input = { cabinetId, hubUrl: request.body.hub_url, code: request.body.code, deviceName: request.body.device_name ?? hostname() };
    const connected = await connectCabinet(deps, input, { fetch, records }).catch((err: unknown) => {
      throw asApiError(err);
    });
    auditConnected(deps, cabinetId, requestActor(request), { hubUrl: input.hubUrl, deviceId: connected.device_id, deviceName: input.deviceName, queued: connected.queued });
    return syncStatus(deps, cabinetId);
  });

  const pause = (request: FastifyRequest, paused: boolean) => {
    const status = setSyncPaused(deps, cabinetOf(request), paused);
    recordAudit(deps, { cabinetId: cabinetOf(request), action: paused ? 'sync.paused' : 'sync.resumed', actor: requestActor(request) });
    return status;
  };
  registerEndpoint(app, pauseSync, (request) => pause(request, true));
  registerEndpoint(app, resumeSync, (request) => pause(request, false));
  registerEndpoint(app, disconnectSync, async (request) => {
    const left = await disconnectCabinet(deps, cabinetOf(request), { fetch });
    recordAudit(deps, { cabinetId: cabinetOf(request), action: 'sync.disconnected', actor: requestActor(request), target: left.device_id, details: { left_hub: left.left_hub } });
    return { ...syncStatus(deps, cabinetOf(request)), left_hub: left.left_hub, left_device_id: left.device_id };
  });
}
