import { readFileSync } from 'node:fs';
import { DEFAULT_LAN_PORT } from '../../shared/lan.js';
import type { Deps } from '../deps.js';
import { loadPolicy, type Policy } from '../policy.js';
import * as store from './store.js';

export type LanDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'secrets' | 'keys'>;

/** The LAN mode in force: the stored settings, with the IT policy's fields winning. */
export interface LanPlan {
  enabled: boolean;
  allowed: boolean;
  managedByPolicy: boolean;
  /** The fields the IT policy presets (they win, and cannot be changed here). */
  preset: NonNullable<Policy['lan']> | null;
  /** Why the policy file cannot be used as it is (LAN sharing then stays off). */
  policyProblems: string[];
  port: number;
  /** null: every non-loopback IPv4 address of the machine. */
  addresses: string[] | null;
  names: string[];
  provided: { certificateFile: string; keyFile: string } | null;
}

/**
 * The policy as it bears on LAN mode. Fails closed: a policy file that is there but cannot be used
 * whole (unreadable, invalid JSON, a bad field — perhaps a rewrite in progress) allows no LAN
 * sharing until it is fixed, so that one broken file never opens what IT closed.
 */
function readPolicy(deps: LanDeps): { policy: Policy; problems: string[] } {
  const loaded = loadPolicy({ readFile: (path) => readFileSync(path) }, deps.config.policyFile);
  return { policy: loaded.policy, problems: loaded.problems };
}

function parseList(json: string | null): string[] | null {
  return json === null ? null : (JSON.parse(json) as string[]);
}

export function lanPlan(deps: LanDeps): LanPlan {
  const row = store.readLanSettings(deps.db.orm);
  const { policy, problems } = readPolicy(deps);
  const preset = policy.lan;
  const allowed = policy.allowLanSharing !== false && problems.length === 0;
  const providedFiles =
    preset?.certificateFile && preset.keyFile
      ? { certificateFile: preset.certificateFile, keyFile: preset.keyFile }
      : row?.providedCertificateFile && row.providedKeyFile
        ? { certificateFile: row.providedCertificateFile, keyFile: row.providedKeyFile }
        : null;
  return {
    enabled: allowed && (preset?.enabled ?? row?.enabled ?? false),
    allowed,
    managedByPolicy: preset !== undefined,
    preset: preset ?? null,
    policyProblems: problems,
    port: preset?.port ?? row?.port ?? DEFAULT_LAN_PORT,
    addresses: preset?.addresses ?? parseList(row?.addresses ?? null),
    names: preset?.names ?? parseList(row?.names ?? null) ?? [],
    provided: providedFiles,
  };
}
