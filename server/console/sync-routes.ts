import { hostname } from 'node:os';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  connectSync,
  disconnectSync,
  discardSyncConflict,
  discardSyncRefused,
  getSyncStatus,
  listSyncConflicts,
  listSyncRefused,
  pauseSync,
  resendSyncRefused,
  resumeSync,
  retrySyncConflict,
} from '../../shared/console-sync.js';
import { PAIRING_REFUSALS } from '../../shared/sync-pairing.js';
import { consoleUser } from './guard.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import type { RecordsByKind } from '../sync/apply.js';
import { HubRefusal, HubUnreachable, type HubFetch } from '../sync/hub-client.js';
import { connectCabinet, disconnectCabinet, setSyncPaused } from '../sync/service.js';
import { syncStatus } from '../sync/status.js';
import {
  discardRefusedByHub,
  discardSyncConflict as discardSetAside,
  listRefusedByHub,
  listSyncConflicts as setAsideChanges,
  resendRefusedByHub,
  retrySyncConflicts,
} from '../sync/conflicts.js';
import { requestActor } from '../audit/service.js';
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
export async function syncConsoleRoutes(
  app: FastifyInstance,
  { deps, records, fetch }: { deps: Deps; records: RecordsByKind; fetch: HubFetch },
): Promise<void> {
  const cabinetOf = (request: FastifyRequest) => consoleUser(request).cabinetId;

  registerEndpoint(app, getSyncStatus, (request) => syncStatus(deps, cabinetOf(request)));
  registerEndpoint(app, listSyncConflicts, (request) => ({ data: setAsideChanges(deps, cabinetOf(request), 100) }));
  registerEndpoint(app, retrySyncConflict, (request) =>
    retrySyncConflicts(deps, cabinetOf(request), [request.params.seq], { fetch, records }, requestActor(request)).catch((err: unknown) => {
      throw err instanceof HubUnreachable || err instanceof HubRefusal
        ? new ApiError('hub_unreachable', `The hub could not serve the change: ${err.message}`)
        : err;
    }),
  );
  registerEndpoint(app, discardSyncConflict, (request, reply) => {
    discardSetAside(deps, cabinetOf(request), request.params.seq, requestActor(request));
    return reply.code(204).send();
  });

  registerEndpoint(app, listSyncRefused, (request) => ({ data: listRefusedByHub(deps, cabinetOf(request), 100, 'excerpt') }));
  registerEndpoint(app, resendSyncRefused, (request) =>
    resendRefusedByHub(deps, cabinetOf(request), [request.params.hlc], requestActor(request)),
  );
  registerEndpoint(app, discardSyncRefused, (request, reply) => {
    discardRefusedByHub(deps, cabinetOf(request), request.params.hlc, requestActor(request));
    return reply.code(204).send();
  });

  registerEndpoint(app, connectSync, async (request) => {
    const cabinetId = cabinetOf(request);
    const input = { cabinetId, hubUrl: request.body.hub_url, code: request.body.code, deviceName: request.body.device_name ?? hostname() };
    await connectCabinet(deps, input, { fetch, records }, requestActor(request)).catch((err: unknown) => {
      throw asApiError(err);
    });
    return syncStatus(deps, cabinetId);
  });

  registerEndpoint(app, pauseSync, (request) => setSyncPaused(deps, cabinetOf(request), true, requestActor(request)));
  registerEndpoint(app, resumeSync, (request) => setSyncPaused(deps, cabinetOf(request), false, requestActor(request)));
  registerEndpoint(app, disconnectSync, async (request) => {
    const left = await disconnectCabinet(deps, cabinetOf(request), { fetch }, requestActor(request));
    return { ...syncStatus(deps, cabinetOf(request)), left_hub: left.left_hub, left_device_id: left.device_id };
  });
}
