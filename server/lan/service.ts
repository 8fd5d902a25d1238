import { readFileSync } from 'node:fs';
import { hostname as osHostname, networkInterfaces } from 'node:os';
import type { LanChange, LanStatus } from '../../shared/lan.js';
import { recordAudit, type AuditActor } from '../audit/service.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import type { Policy } from '../policy.js';
import { describeCertificate, fingerprintOf, normalizeAddress, permittedByAuthority } from './certificates.js';
import { newAuthority, readConstraints, readProvidedCertificate, servedCertificate, wantedIdentities } from './office-ca.js';
import { certificateNames, hostWithPort, listenerAddresses, machineAddresses, type MachineNetwork } from './plan.js';
import { lanPlan, type LanDeps } from './settings.js';
import * as store from './store.js';

export const systemNetwork: MachineNetwork = { hostname: osHostname, interfaces: networkInterfaces };

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
