import type { CliIo } from '../cli/run.js';
import { parseOptions, print, required } from '../cli/args.js';
import { UsageError } from '../errors.js';
import { packageVersion } from '../paths.js';
import { listHubCabinets, listHubDevices, revokeHubDevice, type HubCabinetSummary, type HubDeviceSummary } from './admin.js';
import { loadHubConfig } from './config.js';
import { openHubDatabase } from './database.js';
import { hubDeps, type HubDeps } from './deps.js';
import { createInvite } from './pairing.js';
import { serveHub } from './serve.js';

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
      const v = parseOptions(rest, { ...HUB_OPTIONS, host: { type: 'string' }, port: { type: 'string' }, 'trust-proxy': { type: 'string' } });
      await serveHub(loadHubConfig({ databaseUrl: v['database-url'], host: v.host, port: v.port, trustProxy: v['trust-proxy'] }, io.env));
      return;
    }
    case 'invite': {
      const v = parseOptions(rest, { ...HUB_OPTIONS, cabinet: { type: 'string' } });
      const invite = await withHub(v['database-url'], io, (deps) => createInvite(deps, v.cabinet ?? null));
      const purpose = invite.cabinet_id === null ? 'registers the install’s cabinet on the hub' : `joins the cabinet ${invite.cabinet_id}`;
      print(io, v.json, invite, `Pairing code: ${invite.code}\nIt ${purpose}; it works once, until ${invite.expires_at}.`);
      return;
    }
    case 'cabinets': {
      const [sub, ...options] = rest;
      if (sub !== 'list') throw new UsageError(`unknown hub cabinets command "${sub ?? ''}"; use list`);
      const v = parseOptions(options, HUB_OPTIONS);
      const cabinets = await withHub(v['database-url'], io, listHubCabinets);
      print(io, v.json, { cabinets }, cabinets.length ? cabinets.map(describeCabinet).join('\n') : 'No cabinet on this hub yet (courtier hub invite makes a code to register one).');
      return;
    }
    case 'devices':
      return runDevices(rest, io);
    default:
      throw new UsageError(`unknown hub command "${command ?? ''}"; use serve, invite, cabinets or devices`);
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
  const device = await withHub(v['database-url'], io, (deps) => revokeHubDevice(deps, deviceId));
  print(io, v.json, device, `Device ${device.device_id} (${device.name}) of ${device.cabinet_id} revoked at ${device.revoked_at}: its next request is refused.`);
}

function describeCabinet(c: HubCabinetSummary): string {
  return `${c.cabinet_id}  ${c.name}  ${c.devices} device(s)  ${c.records} record(s)  last sync ${c.last_sync_at ?? 'never'}`;
}

function describeDevice(d: HubDeviceSummary): string {
  return `${d.device_id}  ${d.name}  last seen ${d.last_seen_at ?? 'never'}${d.revoked ? '  revoked' : ''}`;
}
