import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname as osHostname, networkInterfaces } from 'node:os';
import { createSecureContext } from 'node:tls';
import { DEFAULT_LAN_PORT, type LanChange, type LanStatus } from '../../shared/lan.js';
import { recordAudit, SYSTEM_ACTOR, type AuditActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { loadPolicy, type Policy } from '../policy.js';
import {
  createAuthority,
  describeCertificate,
  fingerprintOf,
  isPrivateAddress,
  normalizeAddress,
  issuedByAuthority,
  issueServerCertificate,
  permittedByAuthority,
  type AuthorityConstraints,
  type CertificateFacts,
} from './certificates.js';
import { certificateNames, hostWithPort, listenerAddresses, machineAddresses, renewalReason, type MachineNetwork } from './plan.js';
import * as store from './store.js';

export type LanDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'secrets' | 'keys'>;

export const systemNetwork: MachineNetwork = { hostname: osHostname, interfaces: networkInterfaces };

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

/** What the listener serves: a key and certificate, and the facts it checks Host against. */
export interface ServedCertificate {
  keyPem: string;
  certificatePem: string;
  facts: CertificateFacts;
  source: 'generated' | 'provided';
}

const CA_KEY_SECRET = 'lan/ca-key/';
const SERVER_KEY_SECRET = 'lan/server-key/';

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

export interface LanChangeOptions extends LanChange {
  /** IT-provided PEM files, by path. */
  certificateFile?: string;
  keyFile?: string;
  /** Replace the office CA (a name outside the old one's constraints); brokers trust the new one again. */
  newAuthority?: boolean;
}

/**
 * Switches LAN mode on or off (the CLI, or an admin at the machine in the console). Enabling makes
 * the CA on first use and issues the server certificate at once, so that `lan status` shows what
 * the running service will serve at its next check (at most COURTIER_LAN_CHECK_INTERVAL_MS later).
 */
export async function changeLan(deps: LanDeps, change: LanChangeOptions, network: MachineNetwork, actor: AuditActor): Promise<LanStatus> {
  const plan = lanPlan(deps);
  if (change.enabled && !plan.allowed) {
    throw new ApiError(
      'lan_sharing_forbidden',
      plan.policyProblems.length > 0
        ? `The IT policy file ${deps.config.policyFile} cannot be used as it is, so office LAN sharing stays off until it is fixed: ${plan.policyProblems.join(' ')}`
        : 'The IT policy of this machine forbids sharing Courtier on the office LAN (allowLanSharing: false).',
    );
  }
  const presetConflicts = plan.preset ? conflictsWithPreset(plan.preset, change) : [];
  if (presetConflicts.length > 0) {
    throw new ApiError(
      'lan_managed_by_policy',
      `The IT policy (${deps.config.policyFile}) presets ${presetConflicts.join(', ')} of the office LAN mode; change ${presetConflicts.length === 1 ? 'it' : 'them'} there.`,
      {
        preset: presetConflicts,
      },
    );
  }
  if (change.addresses !== undefined) {
    const present = machineAddresses(network);
    const unknown = change.addresses.filter((a) => !present.includes(normalizeAddress(a)));
    if (unknown.length > 0) {
      throw new ApiError(
        'lan_address_unavailable',
        `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not an address of this machine; it has ${present.join(', ') || 'no LAN address'}.`,
        {
          available: present,
        },
      );
    }
  }
  if (change.port !== undefined && change.port === deps.config.port) {
    throw new ApiError('validation_error', `Port ${change.port} is the loopback listener's; choose another for the LAN (8443 by default).`);
  }
  if ((change.certificateFile === undefined) !== (change.keyFile === undefined)) {
    throw new ApiError('validation_error', 'Give both the certificate file and its key file, or neither.');
  }
  if (change.certificateFile !== undefined && change.keyFile !== undefined) readProvidedCertificate(change.certificateFile, change.keyFile);

  const row = store.readLanSettings(deps.db.orm);
  const names = change.names ?? plan.names;
  const now = deps.clock.now();
  let caCertificatePem = row?.caCertificatePem ?? null;
  let constraints = readConstraints(row?.caConstraints ?? null);
  // (A policy preset, IT's files included, was refused above: here the CA is ours unless --cert is given.)
  if (change.enabled && change.certificateFile === undefined) {
    const wanted = wantedIdentities(network, names, change.addresses ?? plan.addresses);
    if (caCertificatePem !== null && constraints !== null && !change.newAuthority) {
      const outside = wanted.filter((n) => !permittedByAuthority(constraints ?? { names: [], addresses: [] }, n));
      if (outside.length > 0) {
        throw new ApiError(
          'lan_name_outside_ca',
          `The office CA was made for ${[...constraints.names, ...constraints.addresses].join(', ')}, local names (.local, .lan, .home.arpa, .internal) and private addresses; ${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} outside it: they need a new office CA (brokers then trust the new one).`,
          { outside },
        );
      }
    }
    if (caCertificatePem === null || change.newAuthority) {
      const authority = await newAuthority(deps, network, wanted, caCertificatePem);
      caCertificatePem = authority.certificatePem;
      constraints = authority.constraints;
    }
  }
  store.saveLanSettings(deps.db.orm, {
    enabled: change.enabled,
    port: change.port ?? plan.port,
    addresses: change.addresses !== undefined ? JSON.stringify(change.addresses.map(normalizeAddress)) : (row?.addresses ?? null),
    names: JSON.stringify(names),
    providedCertificateFile: change.certificateFile ?? (change.enabled ? null : (row?.providedCertificateFile ?? null)),
    providedKeyFile: change.keyFile ?? (change.enabled ? null : (row?.providedKeyFile ?? null)),
    caCertificatePem,
    caConstraints: constraints === null ? null : JSON.stringify(constraints),
    serverCertificatePem: caCertificatePem === row?.caCertificatePem ? (row?.serverCertificatePem ?? null) : null,
    updatedAt: now,
  });
  recordAudit(deps, {
    cabinetId: null,
    action: change.enabled ? 'lan.enabled' : 'lan.disabled',
    actor,
    details: change.enabled ? { port: change.port ?? plan.port, addresses: change.addresses ?? 'all', names } : {},
  });
  if (change.enabled) await servedCertificate(deps, network, actor);
  return lanStatus(deps, network);
}

/** The fields of a change that the policy's preset decides otherwise. */
function conflictsWithPreset(preset: NonNullable<Policy['lan']>, change: LanChangeOptions): string[] {
  const conflicts: string[] = [];
  if (preset.enabled !== undefined && change.enabled !== preset.enabled) conflicts.push('enabled');
  if (preset.port !== undefined && change.port !== undefined && change.port !== preset.port) conflicts.push('port');
  if (preset.addresses !== undefined && change.addresses !== undefined) conflicts.push('addresses');
  if (preset.names !== undefined && change.names !== undefined) conflicts.push('names');
  if (preset.certificateFile !== undefined && (change.certificateFile !== undefined || change.newAuthority === true))
    conflicts.push('the certificate');
  return conflicts;
}

/** The names and addresses the server certificate should carry now. */
function wantedIdentities(network: MachineNetwork, names: readonly string[], addresses: readonly string[] | null): string[] {
  return [...certificateNames(network.hostname(), names), ...listenerAddresses(addresses, network).addresses];
}

/** A new office CA constrained to these names and (non-private) addresses; the old one's key is dropped. */
async function newAuthority(
  deps: LanDeps,
  network: MachineNetwork,
  wanted: readonly string[],
  replaced: string | null,
): Promise<{ certificatePem: string; constraints: AuthorityConstraints }> {
  const constraints = {
    names: wanted.filter((n) => isIP(n) === 0),
    addresses: wanted.filter((n) => isIP(n) !== 0 && !isPrivateAddress(n)),
  };
  const authority = await createAuthority({ constraints, now: deps.clock.now(), label: `Courtier office CA (${network.hostname()})` });
  deps.secrets.set(CA_KEY_SECRET + fingerprintOf(authority.certificatePem), authority.privateKeyPem);
  if (replaced !== null) deps.secrets.delete(CA_KEY_SECRET + fingerprintOf(replaced));
  return { certificatePem: authority.certificatePem, constraints };
}

function readConstraints(json: string | null): AuthorityConstraints | null {
  return json === null ? null : (JSON.parse(json) as AuthorityConstraints);
}

/** Reads IT-provided PEM files and checks that the key is the certificate's (TLS refuses otherwise). */
function readProvidedCertificate(certificateFile: string, keyFile: string): ServedCertificate {
  let certificatePem: string;
  let keyPem: string;
  try {
    certificatePem = readFileSync(certificateFile, 'utf8');
    keyPem = readFileSync(keyFile, 'utf8');
  } catch (err) {
    throw new ApiError('validation_error', `Cannot read the provided certificate or key: ${(err as Error).message}`);
  }
  try {
    createSecureContext({ cert: certificatePem, key: keyPem });
    return { certificatePem, keyPem, facts: describeCertificate(certificatePem), source: 'provided' };
  } catch (err) {
    throw new ApiError(
      'validation_error',
      `The provided certificate and key cannot be used together (${(err as Error).message}); give the PEM certificate and its unencrypted PEM key.`,
    );
  }
}

/**
 * The certificate to serve now: IT's as it is, else the generated one, re-issued first when the
 * names or addresses changed or it expires within 30 days (the CA stays: brokers trust it once).
 * Null while LAN mode is off or has no CA.
 */
export async function servedCertificate(
  deps: LanDeps,
  network: MachineNetwork,
  actor: AuditActor = SYSTEM_ACTOR,
): Promise<ServedCertificate | null> {
  const plan = lanPlan(deps);
  if (!plan.enabled) return null;
  if (plan.provided) return readProvidedCertificate(plan.provided.certificateFile, plan.provided.keyFile);
  let row = store.readLanSettings(deps.db.orm);
  if (!row?.caCertificatePem) {
    // LAN mode preset by the IT policy, never enabled here: the CA is made on this first use.
    const authority = await newAuthority(deps, network, wantedIdentities(network, plan.names, plan.addresses), null);
    const base = row ?? {
      enabled: false,
      port: plan.port,
      addresses: null,
      names: '[]',
      providedCertificateFile: null,
      providedKeyFile: null,
      serverCertificatePem: null,
    };
    store.saveLanSettings(deps.db.orm, {
      ...base,
      caCertificatePem: authority.certificatePem,
      caConstraints: JSON.stringify(authority.constraints),
      updatedAt: deps.clock.now(),
    });
    row = store.readLanSettings(deps.db.orm);
    if (!row?.caCertificatePem) return null;
  }
  const caFingerprint = fingerprintOf(row.caCertificatePem);
  // Whatever the CA may not certify stays out: one such name would make clients refuse the whole certificate.
  const constraints = readConstraints(row.caConstraints) ?? { names: [], addresses: [] };
  const wanted = {
    names: certificateNames(network.hostname(), plan.names).filter((n) => permittedByAuthority(constraints, n)),
    addresses: listenerAddresses(plan.addresses, network).addresses.filter((a) => permittedByAuthority(constraints, a)),
  };
  const currentKey = row.serverCertificatePem ? deps.secrets.get(SERVER_KEY_SECRET + fingerprintOf(row.serverCertificatePem)) : undefined;
  const current = row.serverCertificatePem && currentKey ? describeCertificate(row.serverCertificatePem) : null;
  const now = deps.clock.now();
  const reason = renewalReason(
    current && row.serverCertificatePem
      ? { ...current, issuedByCurrentAuthority: issuedByAuthority(row.serverCertificatePem, row.caCertificatePem) }
      : null,
    wanted,
    now,
  );
  if (reason === null && row.serverCertificatePem && currentKey && current) {
    return { certificatePem: row.serverCertificatePem, keyPem: currentKey, facts: current, source: 'generated' };
  }
  const caKey = deps.secrets.get(CA_KEY_SECRET + caFingerprint);
  if (caKey === undefined)
    throw new Error(
      "The office CA's private key is missing from the secret store: the LAN needs a new office CA, made on this machine by `courtier lan enable --new-ca` (brokers then trust the new one).",
    );
  const issued = await issueServerCertificate({
    authority: { certificatePem: row.caCertificatePem, privateKeyPem: caKey },
    names: wanted.names,
    addresses: wanted.addresses,
    now,
  });
  const facts = describeCertificate(issued.certificatePem);
  // The key first, under the certificate's fingerprint: a reader never finds a certificate without its key.
  deps.secrets.set(SERVER_KEY_SECRET + facts.fingerprintSha256, issued.privateKeyPem);
  store.saveLanSettings(deps.db.orm, { ...row, serverCertificatePem: issued.certificatePem, updatedAt: now });
  if (row.serverCertificatePem) deps.secrets.delete(SERVER_KEY_SECRET + fingerprintOf(row.serverCertificatePem));
  recordAudit(deps, {
    cabinetId: null,
    action: 'lan.certificate_issued',
    actor,
    target: facts.fingerprintSha256,
    details: { reason, names: facts.names, addresses: facts.addresses, not_after: toIso(facts.notAfter) },
  });
  return { certificatePem: issued.certificatePem, keyPem: issued.privateKeyPem, facts, source: 'generated' };
}

export function lanStatus(deps: LanDeps, network: MachineNetwork): LanStatus {
  const plan = lanPlan(deps);
  const row = store.readLanSettings(deps.db.orm);
  const { addresses, missing } = listenerAddresses(plan.addresses, network);
  const problems: string[] = [];
  if (!plan.allowed) {
    problems.push(
      plan.policyProblems.length > 0
        ? `The IT policy file cannot be used as it is, so office LAN sharing stays off until it is fixed: ${plan.policyProblems.join(' ')}`
        : 'The IT policy forbids sharing Courtier on the office LAN.',
    );
  }
  if (missing.length > 0)
    problems.push(`${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} no longer an address of this machine.`);
  if (plan.enabled && addresses.length === 0) problems.push('This machine has no LAN address to listen on.');
  const constraints = readConstraints(row?.caConstraints ?? null);
  if (plan.enabled && !plan.provided && constraints !== null) {
    const outside = addresses.filter((address) => !permittedByAuthority(constraints, address));
    if (outside.length > 0)
      problems.push(
        `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} outside what the office CA may certify: reach the service by name, or make a new office CA on this machine (\`courtier lan enable --new-ca\`).`,
      );
  }
  let certificate: LanStatus['certificate'] = null;
  try {
    const pem = plan.provided ? readFileSync(plan.provided.certificateFile, 'utf8') : row?.serverCertificatePem;
    if (pem) {
      const facts = describeCertificate(pem);
      certificate = {
        source: plan.provided ? 'provided' : 'generated',
        names: facts.names,
        addresses: facts.addresses,
        not_after: toIso(facts.notAfter),
        fingerprint_sha256: facts.fingerprintSha256,
      };
    }
  } catch (err) {
    problems.push(`The provided certificate cannot be read: ${(err as Error).message}`);
  }
  const names = certificate?.names ?? certificateNames(network.hostname(), plan.names);
  return {
    enabled: plan.enabled,
    allowed: plan.allowed,
    managed_by_policy: plan.managedByPolicy,
    port: plan.port,
    urls: [...names.filter((name) => !name.startsWith('*.')), ...addresses].map((host) => `https://${hostWithPort(host, plan.port)}`),
    addresses,
    names: plan.names,
    ca_fingerprint_sha256: !plan.provided && row?.caCertificatePem ? fingerprintOf(row.caCertificatePem) : null,
    certificate,
    problems,
  };
}

export function caFingerprint(deps: Pick<Deps, 'db'>): string | null {
  const pem = caCertificate(deps);
  return pem === null ? null : fingerprintOf(pem);
}

/** The office CA's certificate (PEM), or null when LAN mode never made one. Its key never leaves the secret store. */
export function caCertificate(deps: Pick<Deps, 'db'>): string | null {
  return store.readLanSettings(deps.db.orm)?.caCertificatePem ?? null;
}
