import type { CliIo } from '../cli/run.js';
import { parseOptions, print, required } from '../cli/args.js';
import { UsageError } from '../errors.js';
import { packageVersion } from '../paths.js';
import { SYNC_PROTOCOL_VERSION } from '../../shared/sync-protocol.js';
import {
  listHubCabinets,
  listHubDevices,
  markRestored,
  resetCabinetProtocol,
  revokeHubDevice,
  type HubCabinetSummary,
  type HubDeviceSummary,
} from './admin.js';
import { loadHubConfig, retentionOf } from './config.js';
import { compactAndAudit } from './compaction-runs.js';
import type { CompactionSummary } from './compaction.js';
import { openHubDatabase } from './database.js';
import { hubDeps, type HubDeps } from './deps.js';
import { createInvite } from './pairing.js';
import { listHubAudit, operatorActor, recordHubAudit, recordHubAuditIn, verifyHubAudit } from './audit.js';
import { ReportedFailure, withFlagHints } from '../cli/common.js';
import { serveHub } from './serve.js';
import { MAX_GRANT_CREDITS } from '../../shared/sync-wallet.js';
import { grantHubCredits, hubWalletBalance, type WarnLog } from './wallet.js';

/** `courtier hub …`: the hub's commands, run against its PostgreSQL (never the agent's data dir). */

const HUB_OPTIONS = {
  'database-url': { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

/** Opens the hub's database (migrating it), runs the command, closes it. */
async function withHub<T>(databaseUrl: string | undefined, io: CliIo, body: (deps: HubDeps) => Promise<T>): Promise<T> {
  const config = loadHubConfig({ databaseUrl }, io.env);
  const database = await openHubDatabase(config.databaseUrl);
  try {
    return await body(hubDeps(database, packageVersion()));
  } finally {
    await database.close();
  }
}

export async function runHub(argv: string[], io: CliIo): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const v = parseOptions(rest, {
        ...HUB_OPTIONS,
        host: { type: 'string' },
        port: { type: 'string' },
        'trust-proxy': { type: 'string' },
      });
      await serveHub(loadHubConfig({ databaseUrl: v['database-url'], host: v.host, port: v.port, trustProxy: v['trust-proxy'] }, io.env));
      return;
    }
    case 'invite': {
      const v = parseOptions(rest, { ...HUB_OPTIONS, cabinet: { type: 'string' }, 'new-cabinet': { type: 'string' } });
      const newCabinet = v['new-cabinet'];
      if ((v.cabinet === undefined) === (newCabinet === undefined)) {
        throw new UsageError(
          'say which cabinet the code is for: --new-cabinet ID to register an install’s cabinet (its id, as courtier sync status or the console shows it), or --cabinet ID to add an install to a cabinet the hub has',
        );
      }
      const target = newCabinet === undefined ? { join: v.cabinet ?? '' } : { register: newCabinet };
      const id = newCabinet ?? v.cabinet;
      const invite = await withHub(v['database-url'], io, async (deps) => {
        const made = await withFlagHints(() => createInvite(deps, target), {
          not_found: `To register it, use --new-cabinet ${id}; \`courtier hub cabinets list\` shows the cabinets.`,
          cabinet_already_on_hub: `Make its code with --cabinet ${id}.`,
        });
        await recordHubAudit(deps, {
          action: 'hub.invite_created',
          actor: operatorActor(),
          cabinetId: made.cabinet_id,
          details: { purpose: made.purpose, expires_at: made.expires_at },
        });
        return made;
      });
      const purpose =
        invite.purpose === 'register'
          ? `registers the cabinet ${invite.cabinet_id} (courtier sync connect on the install that holds it)`
          : `adds a new install to the cabinet ${invite.cabinet_id} (courtier sync join)`;
      print(io, v.json, invite, `Pairing code: ${invite.code}\nIt ${purpose}; it works once, until ${invite.expires_at}.`);
      return;
    }
    case 'cabinets': {
      const [sub, ...options] = rest;
      if (sub === 'reset-protocol') {
        const v = parseOptions(options, { ...HUB_OPTIONS, cabinet: { type: 'string' }, protocol: { type: 'string' } });
        const cabinetId = required(v, 'cabinet');
        const protocol = v.protocol === undefined ? SYNC_PROTOCOL_VERSION : Number(v.protocol);
        // This build's protocol is the hub's: a cabinet never needs one the hub does not speak.
        if (!Number.isInteger(protocol) || protocol < 1 || protocol > SYNC_PROTOCOL_VERSION)
          throw new UsageError(`--protocol must be a whole number from 1 to ${SYNC_PROTOCOL_VERSION}`);
        const reset = await withHub(v['database-url'], io, async (deps) => {
          const done = await resetCabinetProtocol(deps, cabinetId, protocol);
          await recordHubAudit(deps, {
            action: 'hub.protocol_reset',
            actor: operatorActor(),
            cabinetId,
            details: { highest_protocol: protocol },
          });
          return done;
        });
        print(
          io,
          v.json,
          reset,
          `The cabinet ${printable(reset.cabinet_id)} now serves installs speaking sync protocol ${Math.max(1, reset.highest_protocol - 1)} to ${reset.highest_protocol}.`,
        );
        return;
      }
      if (sub !== 'list') throw new UsageError(`unknown hub cabinets command "${sub ?? ''}"; use list or reset-protocol`);
      const v = parseOptions(options, HUB_OPTIONS);
      const cabinets = await withHub(v['database-url'], io, listHubCabinets);
      print(
        io,
        v.json,
        { cabinets },
        cabinets.length
          ? cabinets.map(describeCabinet).join('\n')
          : 'No cabinet on this hub yet (courtier hub invite --new-cabinet ID makes a code to register one).',
      );
      return;
    }
    case 'restored': {
      const v = parseOptions(rest, HUB_OPTIONS);
      const cabinets = await withHub(v['database-url'], io, async (deps) => {
        const count = await markRestored(deps);
        await recordHubAudit(deps, { action: 'hub.restored', actor: operatorActor(), details: { cabinets: count } });
        return count;
      });
      print(
        io,
        v.json,
        { cabinets },
        `${cabinets} cabinet(s) have a new epoch: each install pulls its cabinet again and sends again what it made since the backup, at its next exchange with the hub.`,
      );
      return;
    }
    case 'compact': {
      const v = parseOptions(rest, { ...HUB_OPTIONS, cabinet: { type: 'string' } });
      const retention = retentionOf(loadHubConfig({ databaseUrl: v['database-url'] }, io.env));
      const compacted = await withHub(v['database-url'], io, (deps) => compactAndAudit(deps, retention, operatorActor(), v.cabinet));
      print(
        io,
        v.json,
        { cabinets: compacted },
        compacted.length ? compacted.map(describeCompaction).join('\n') : 'No cabinet on this hub yet.',
      );
      return;
    }
    case 'devices':
      return runDevices(rest, io);
    case 'credits':
      return runHubCredits(rest, io);
    case 'audit':
      return runHubAudit(rest, io);
    default:
      throw new UsageError(
        `unknown hub command "${command ?? ''}"; use serve, invite, cabinets, devices, credits, compact, audit or restored`,
      );
  }
}

async function runDevices(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'list') {
    const v = parseOptions(rest, { ...HUB_OPTIONS, cabinet: { type: 'string' } });
    const cabinet = required(v, 'cabinet');
    const devices = await withHub(v['database-url'], io, (deps) => listHubDevices(deps, cabinet));
    print(io, v.json, { devices }, devices.length ? devices.map(describeDevice).join('\n') : 'No device in this cabinet.');
    return;
  }
  if (sub !== 'revoke') throw new UsageError(`unknown hub devices command "${sub ?? ''}"; use list or revoke`);
  const v = parseOptions(rest, { ...HUB_OPTIONS, device: { type: 'string' } });
  const deviceId = required(v, 'device');
  const device = await withHub(v['database-url'], io, async (deps) => {
    const revoked = await withFlagHints(() => revokeHubDevice(deps, deviceId), {
      not_found: '`courtier hub devices list --cabinet ID` shows the devices of a cabinet.',
    });
    await recordHubAudit(deps, {
      action: 'hub.device_revoked',
      actor: operatorActor(),
      cabinetId: revoked.cabinet_id,
      target: deviceId,
      details: { name: revoked.name },
    });
    return revoked;
  });
  print(
    io,
    v.json,
    device,
    `Device ${device.device_id} (${printable(device.name)}) of ${printable(device.cabinet_id)} revoked at ${device.revoked_at}: its next request is refused.`,
  );
}

/** A whole number of credits the operator typed, or why not. */
function creditsAmount(text: string): number {
  const amount = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(amount >= 1 && amount <= MAX_GRANT_CREDITS))
    throw new UsageError(`--amount must be a whole number of credits from 1 to ${MAX_GRANT_CREDITS}`);
  return amount;
}

/** `hub credits grant|balance`: the cabinet's one wallet, which only the operator tops up. */
async function runHubCredits(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  const v = parseOptions(rest, { ...HUB_OPTIONS, cabinet: { type: 'string' }, amount: { type: 'string' }, note: { type: 'string' } });
  const cabinetId = required(v, 'cabinet');
  if (sub === 'balance') {
    const wallet = await withHub(v['database-url'], io, (deps) => hubWalletBalance(deps, cabinetId));
    const lines = wallet.entries.map(
      (e) =>
        `${e.created_at}  ${e.kind}  ${e.amount > 0 ? '+' : ''}${e.amount}${e.job_id ? `  job ${e.job_id}` : ''}${e.device_id ? `  device ${e.device_id}` : ''}${e.note ? `  ${printable(e.note)}` : ''}`,
    );
    print(io, v.json, wallet, [`Cabinet ${printable(cabinetId)}: ${wallet.balance} credits.`, ...lines].join('\n'));
    return;
  }
  if (sub !== 'grant') throw new UsageError(`unknown hub credits command "${sub ?? ''}"; use grant or balance`);
  const amount = creditsAmount(required(v, 'amount'));
  const note = v.note ?? null;
  if (note !== null && (note.length > 200 || printable(note) !== note))
    throw new UsageError('--note must be at most 200 characters, without control characters');
  const log: WarnLog = { warn: (_details, message) => io.stderr(`${message}\n`) };
  const granted = await withHub(v['database-url'], io, async (deps) => {
    const actor = operatorActor();
    return grantHubCredits(deps, cabinetId, amount, note, log, (tx, done) =>
      recordHubAuditIn(tx, deps.clock.now(), {
        action: 'hub.credits_granted',
        actor,
        cabinetId,
        target: done.entry_id,
        details: { amount, balance: done.balance, ...(note ? { note } : {}) },
      }),
    );
  });
  print(
    io,
    v.json,
    granted,
    `Granted ${amount} credits to ${printable(cabinetId)}; its balance is ${granted.balance}. Its installs show it at their next exchange with the hub (within seconds while online).`,
  );
}

async function runHubAudit(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'verify') {
    const v = parseOptions(rest, HUB_OPTIONS);
    const result = await withHub(v['database-url'], io, verifyHubAudit);
    const human = result.ok
      ? `The hub's audit log is intact: ${result.checked} entries checked.${result.head ? ` Newest seal: ${result.head}.` : ''}`
      : `The hub's audit log was tampered with at entry ${result.broken?.seq} (${result.broken?.at}, ${result.broken?.action}), after ${result.checked} intact entries.`;
    print(io, v.json, result, human);
    if (!result.ok) throw new ReportedFailure('the hub audit chain is broken');
    return;
  }
  if (sub !== 'list') throw new UsageError(`unknown hub audit command "${sub ?? ''}"; use list or verify`);
  const v = parseOptions(rest, { ...HUB_OPTIONS, cabinet: { type: 'string' }, limit: { type: 'string' } });
  const limit = v.limit === undefined ? 100 : Number(v.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
  const entries = await withHub(v['database-url'], io, (deps) => listHubAudit(deps, { cabinetId: v.cabinet, limit }));
  const lines = entries.map(
    (e) =>
      `${e.at}  ${e.action}${e.result === 'failure' ? ' (refused)' : ''}  ${printable(e.actor.label ?? e.actor.kind)}${e.address ? ` from ${e.address}` : ''}${e.cabinet_id ? `  cabinet ${printable(e.cabinet_id)}` : ''}${e.target ? `  ${printable(e.target)}` : ''}`,
  );
  print(io, v.json, { data: entries }, lines.length > 0 ? lines.join('\n') : 'No audit entries.');
}

/**
 * Text a device sent, as the operator's terminal may show it: control characters and direction
 * marks as \u escapes, so that a name can neither move the cursor nor hide what follows it (pairing
 * refuses them; a row written before that rule is still shown safely).
 */
export function printable(text: string): string {
  return text.replace(/[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function describeCabinet(c: HubCabinetSummary): string {
  return `${printable(c.cabinet_id)}  ${printable(c.name)}  ${c.devices} device(s)  ${c.records} record(s)  last sync ${c.last_sync_at ?? 'never'}`;
}

function describeCompaction(c: CompactionSummary): string {
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  return `${printable(c.cabinet_id)}  ${c.changes_deleted} change(s) deleted (${mb(c.change_bytes_deleted)} MB), ${c.blobs_deleted} PDF(s) no record names deleted (${mb(c.blob_bytes_deleted)} MB); changes kept from seq ${c.retained_from_seq}`;
}

function describeDevice(d: HubDeviceSummary): string {
  return `${d.device_id}  ${printable(d.name)}  last seen ${d.last_seen_at ?? 'never'}${d.revoked ? '  revoked' : ''}`;
}
