import { hostname } from 'node:os';
import { UsageError } from '../errors.js';
import { syncedRecords } from '../sync/records.js';
import { connectCabinet, disconnectCabinet, joinCabinet, setSyncPaused } from '../sync/service.js';
import { syncStatus } from '../sync/status.js';
import {
  discardRefusedByHub,
  discardSyncConflict,
  listRefusedByHub,
  listSyncConflicts,
  resendRefusedByHub,
  retrySyncConflicts,
} from '../sync/conflicts.js';
import { CLI_ACTOR } from '../audit/service.js';
import { downloadAll, exchangeWalletNow, shareJoinedAdmin, uploadQueue } from '../sync/transfer.js';
import { parse, print, readPassword, required, withDeps, withFlagHints, type CliIo } from './common.js';

const fetchHub = (url: string, init: RequestInit) => globalThis.fetch(url, init);

function describe(status: ReturnType<typeof syncStatus>): string {
  if (status.state === 'off') return `Cabinet ${status.cabinet_id} does not sync.`;
  const lines = [
    `Cabinet ${status.cabinet_id} syncs with ${status.hub_url ?? '?'} as device ${status.device_id ?? '?'} (${status.device_name ?? ''}).`,
    `State: ${status.state}${status.paused ? ' (paused)' : ''}; ${status.pending_changes} change(s) waiting to be sent.`,
    `Last push: ${status.last_push_at ?? 'never'}; last pull: ${status.last_pull_at ?? 'never'}.`,
  ];
  if (status.last_error) lines.push(`Problem: ${status.last_error}.`);
  if (status.refused_by_hub > 0)
    lines.push(`${status.refused_by_hub} change(s) made here refused by the hub (courtier sync conflicts --cabinet ${status.cabinet_id}).`);
  if (status.resyncing) lines.push('Catching up with the hub from the start: this install, or the hub, was restored from a backup.');
  if (status.set_aside_changes > 0)
    lines.push(
      `${status.set_aside_changes} change(s) from other installs set aside (courtier sync conflicts --cabinet ${status.cabinet_id}).`,
    );
  return lines.join('\n');
}

function seqOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seq = Number(text);
  if (!Number.isInteger(seq) || seq < 1)
    throw new UsageError('--seq must be a set-aside change’s seq, as courtier sync conflicts lists it');
  return seq;
}

/** `--refused STAMP` (or `all`, to send again): a change made here that the hub refused. */
async function refusedAction(
  action: 'discard' | 'retry',
  cabinetId: string,
  stamp: string,
  v: { 'data-dir'?: string; json: boolean },
  io: CliIo,
) {
  if (action === 'discard') {
    if (stamp === 'all') throw new UsageError('sync conflicts discard takes one stamp at a time: --refused STAMP');
    await withDeps(v['data-dir'], io, (deps) => discardRefusedByHub(deps, cabinetId, stamp, CLI_ACTOR));
    print(io, v.json, { discarded_refused: stamp }, `The change stamped ${stamp} is discarded: the other installs will not get it.`);
    return;
  }
  const result = await withDeps(v['data-dir'], io, (deps) =>
    resendRefusedByHub(deps, cabinetId, stamp === 'all' ? undefined : [stamp], CLI_ACTOR),
  );
  print(
    io,
    v.json,
    result,
    `${result.queued} change(s) queued again; the service sends them. Refused again, they come back to courtier sync conflicts --cabinet ${cabinetId}.`,
  );
}

/** `sync conflicts discard --seq N` forgets a set-aside change; `sync conflicts retry [--seq N]` fetches and applies it (all of them) again. */
async function conflictAction(action: 'discard' | 'retry', rest: string[], io: CliIo): Promise<void> {
  const v = parse(rest, { cabinet: { type: 'string' }, seq: { type: 'string' }, refused: { type: 'string' } });
  const cabinetId = required(v, 'cabinet');
  if (v.refused !== undefined) {
    if (v.seq !== undefined)
      throw new UsageError('give --seq N (a change set aside here) or --refused STAMP (one the hub refused), not both');
    return refusedAction(action, cabinetId, v.refused, v, io);
  }
  const seq = seqOf(v.seq);
  if (action === 'discard') {
    if (seq === undefined) throw new UsageError('sync conflicts discard needs --seq N');
    await withDeps(v['data-dir'], io, (deps) => discardSyncConflict(deps, cabinetId, seq, CLI_ACTOR));
    print(io, v.json, { discarded: seq }, `The change with seq ${seq} is discarded on this install.`);
    return;
  }
  const result = await withDeps(v['data-dir'], io, (deps) =>
    retrySyncConflicts(deps, cabinetId, seq === undefined ? undefined : [seq], { fetch: fetchHub, records: syncedRecords() }, CLI_ACTOR),
  );
  const human = [
    `${result.applied.length} change(s) applied${result.applied.length ? ` (seq ${result.applied.join(', ')})` : ''}.`,
    result.still_set_aside.length
      ? `${result.still_set_aside.length} still set aside (seq ${result.still_set_aside.join(', ')}): courtier sync conflicts --cabinet ${cabinetId} says why.`
      : '',
    result.no_longer_on_hub.length
      ? `${result.no_longer_on_hub.length} no longer on the hub (seq ${result.no_longer_on_hub.join(', ')}): discard them.`
      : '',
  ].filter(Boolean);
  print(io, v.json, result, human.join('\n'));
}

export async function runSync(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  const records = syncedRecords();
  switch (sub) {
    case 'connect': {
      const v = parse(rest, { cabinet: { type: 'string' }, hub: { type: 'string' }, code: { type: 'string' }, name: { type: 'string' } });
      const input = {
        cabinetId: required(v, 'cabinet'),
        hubUrl: required(v, 'hub'),
        code: required(v, 'code'),
        deviceName: v.name ?? hostname(),
      };
      const result = await withDeps(v['data-dir'], io, async (deps) => {
        const connected = await withFlagHints(() => connectCabinet(deps, input, { fetch: fetchHub, records }, CLI_ACTOR), {
          pairing_code_joins: 'On a new install, `courtier sync join` takes it.',
        });
        io.stderr(
          connected.reconnected
            ? `reconnected to the hub's cabinet as device ${connected.device_id}; uploading ${connected.queued} changes made here meanwhile\n`
            : `connected as device ${connected.device_id}; uploading ${connected.queued} records\n`,
        );
        await uploadQueue(deps, records, input.cabinetId, fetchHub, (sent, total) => io.stderr(`uploaded ${sent} of ${total} changes\n`));
        // Back on a cabinet the hub holds: what the other installs did meanwhile comes down now.
        if (connected.reconnected)
          await downloadAll(deps, records, input.cabinetId, fetchHub, (received) => io.stderr(`downloaded ${received} changes\n`));
        await exchangeWalletNow(deps, input.cabinetId, fetchHub);
        return connected;
      });
      const done = result.reconnected ? 'it is up to date with the hub' : 'everything it held is on the hub';
      print(
        io,
        v.json,
        { device_id: result.device_id, cabinet_id: result.cabinet_id, reconnected: result.reconnected },
        `Cabinet ${result.cabinet_id} now syncs as device ${result.device_id}; ${done}.`,
      );
      return;
    }
    case 'join': {
      const v = parse(rest, {
        hub: { type: 'string' },
        code: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        'password-stdin': { type: 'boolean', default: false },
        name: { type: 'string' },
      });
      const hubUrl = required(v, 'hub');
      const code = required(v, 'code');
      const email = required(v, 'email');
      const password = await readPassword(io, v);
      const result = await withDeps(v['data-dir'], io, async (deps) => {
        const joined = await joinCabinet(
          deps,
          { hubUrl, code, email, password, deviceName: v.name ?? hostname() },
          { fetch: fetchHub },
          CLI_ACTOR,
        );
        io.stderr(`joined cabinet ${joined.cabinet_id} as device ${joined.device_id}; downloading\n`);
        await downloadAll(deps, records, joined.cabinet_id, fetchHub, (received) => io.stderr(`downloaded ${received} changes\n`));
        // Queued for the service to send, like any change made here.
        shareJoinedAdmin(deps, joined.cabinet_id, joined.user_id);
        await exchangeWalletNow(deps, joined.cabinet_id, fetchHub);
        return joined;
      });
      print(
        io,
        v.json,
        result,
        `Cabinet ${result.cabinet_id} is on this install, synced as device ${result.device_id}; sign in as ${email}.`,
      );
      return;
    }
    case 'status': {
      const v = parse(rest, { cabinet: { type: 'string' } });
      const cabinetId = required(v, 'cabinet');
      const status = await withDeps(v['data-dir'], io, (deps) => syncStatus(deps, cabinetId));
      const { cabinet_id: _cabinet, ...shown } = status;
      print(io, v.json, shown, describe(status));
      return;
    }
    case 'conflicts': {
      if (rest[0] === 'discard' || rest[0] === 'retry') return conflictAction(rest[0], rest.slice(1), io);
      const v = parse(rest, { cabinet: { type: 'string' }, limit: { type: 'string' } });
      const cabinetId = required(v, 'cabinet');
      const limit = v.limit === undefined ? 100 : Number(v.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
      const [conflicts, refused] = await withDeps(
        v['data-dir'],
        io,
        (deps) => [listSyncConflicts(deps, cabinetId, limit), listRefusedByHub(deps, cabinetId, limit, 'whole')] as const,
      );
      const human = [
        conflicts.length
          ? conflicts
              .map((c) => `seq ${c.seq}  ${c.kind} ${c.record_id}  ${c.op}  from device ${c.device_id}  ${c.reason}: ${c.message}`)
              .join('\n')
          : 'No change from other installs was set aside.',
        ...(refused.length
          ? [
              'Changes made here that the hub refused (the other installs do not have them):',
              ...refused.map((r) => `stamp ${r.hlc}  ${r.kind} ${r.record_id}  ${r.op}  ${r.code}: ${r.message}`),
              `Send them again once the hub is updated (sync conflicts retry --refused all), or forget one (sync conflicts discard --refused STAMP).`,
            ]
          : []),
      ];
      print(io, v.json, { conflicts, refused_by_hub: refused }, human.join('\n'));
      return;
    }
    case 'pause':
    case 'resume': {
      const v = parse(rest, { cabinet: { type: 'string' } });
      const cabinetId = required(v, 'cabinet');
      const status = await withDeps(v['data-dir'], io, (deps) => setSyncPaused(deps, cabinetId, sub === 'pause', CLI_ACTOR));
      print(io, v.json, { paused: status.paused }, sub === 'pause' ? 'Sync paused: changes are queued until resume.' : 'Sync resumed.');
      return;
    }
    case 'disconnect': {
      const v = parse(rest, { cabinet: { type: 'string' } });
      const cabinetId = required(v, 'cabinet');
      const left = await withDeps(v['data-dir'], io, (deps) => disconnectCabinet(deps, cabinetId, { fetch: fetchHub }, CLI_ACTOR));
      const hub = left.left_hub
        ? `Device ${left.device_id} left the hub (revoked there).`
        : `The hub could not be told: ask its operator to revoke device ${left.device_id} (courtier hub devices revoke --device ${left.device_id}).`;
      print(
        io,
        v.json,
        { cabinet_id: cabinetId, state: 'off', ...left },
        `Cabinet ${cabinetId} no longer syncs; its records stay on this install. ${hub}`,
      );
      return;
    }
    default:
      throw new UsageError(`unknown sync command "${sub ?? ''}"; use connect, join, status, conflicts, pause, resume or disconnect`);
  }
}
