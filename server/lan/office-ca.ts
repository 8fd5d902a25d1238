import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { recordAudit, SYSTEM_ACTOR, type AuditActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import {
  createAuthority,
  describeCertificate,
  fingerprintOf,
  isPrivateAddress,
  issuedByAuthority,
  issueServerCertificate,
  permittedByAuthority,
  type AuthorityConstraints,
  type CertificateFacts,
} from './certificates.js';
import { certificateNames, listenerAddresses, renewalReason, type MachineNetwork } from './plan.js';
import { lanPlan, type LanDeps } from './settings.js';
import * as store from './store.js';

/**
 * The office CA and the certificate the LAN listener serves (IT's, or one the CA issues and
 * renews); each private key stays in the secret store, under its certificate's fingerprint.
 */

/** What the listener serves: a key and certificate, and the facts it checks Host against. */
export interface ServedCertificate {
  keyPem: string;
  certificatePem: string;
  facts: CertificateFacts;
  source: 'generated' | 'provided';
}

const CA_KEY_SECRET = 'lan/ca-key/';
const SERVER_KEY_SECRET = 'lan/server-key/';

/** The names and addresses the server certificate should carry now. */
export function wantedIdentities(network: MachineNetwork, names: readonly string[], addresses: readonly string[] | null): string[] {
  return [...certificateNames(network.hostname(), names), ...listenerAddresses(addresses, network).addresses];
}

/** A new office CA constrained to these names and (non-private) addresses; the old one's key is dropped. */
export async function newAuthority(
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

export function readConstraints(json: string | null): AuthorityConstraints | null {
  return json === null ? null : (JSON.parse(json) as AuthorityConstraints);
}

/** Reads IT-provided PEM files and checks that the key is the certificate's (TLS refuses otherwise). */
export function readProvidedCertificate(certificateFile: string, keyFile: string): ServedCertificate {
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

export function caFingerprint(deps: Pick<Deps, 'db'>): string | null {
  const pem = caCertificate(deps);
  return pem === null ? null : fingerprintOf(pem);
}

/** The office CA's certificate (PEM), or null when LAN mode never made one. Its key never leaves the secret store. */
export function caCertificate(deps: Pick<Deps, 'db'>): string | null {
  return store.readLanSettings(deps.db.orm)?.caCertificatePem ?? null;
}
