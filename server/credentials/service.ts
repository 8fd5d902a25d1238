import { and, eq } from 'drizzle-orm';
import type { InsurerCredentials } from '@courtier/adapter-kit';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { insurerCredentials } from './schema.js';
import * as store from './store.js';

function secretName(cabinetId: string, compagnie: string): string {
  return `insurer-password:${cabinetId}:${compagnie}`;
}

function extraSecretName(cabinetId: string, compagnie: string, field: string): string {
  return `insurer-extra:${cabinetId}:${compagnie}:${field}`;
}

/** The names of the insurer's extra credential fields that are secrets (its manifest says which). */
export function secretExtraFields(deps: Pick<Deps, 'insurers'>, compagnie: string): string[] {
  return (deps.insurers.get(compagnie)?.credentialFields?.extra ?? []).filter((f) => f.secret).map((f) => f.name);
}

/** Refuses an extra field the insurer's manifest does not declare (an insurer given in code takes any). */
function checkExtraFields(deps: Pick<Deps, 'insurers'>, compagnie: string, extra: Record<string, string>): void {
  const insurer = deps.insurers.get(compagnie);
  const declared = insurer?.credentialFields?.extra;
  if (!insurer || !declared) return;
  const unknown = Object.keys(extra).filter((name) => !declared.some((f) => f.name === name));
  if (unknown.length === 0) return;
  const known = declared.map((f) => `${f.name} (${f.label})`).join(', ');
  throw new ApiError(
    'validation_error',
    `${insurer.name} has no credential field ${unknown.join(', ')}; ${known ? `its extra fields are ${known}` : 'it takes a login and a password only'}.`,
  );
}

/**
 * Sets (or replaces) a cabinet's portal credentials for an insurer. The password goes to the
 * SecretStore; SQLite keeps only the login and that credentials exist. Never returned by any API.
 */
export function setInsurerCredentials(
  deps: Deps,
  cabinetId: string,
  compagnie: string,
  input: { login: string; password: string; extra?: Record<string, string> },
): { compagnie: string; login: string; updated_at: string } {
  if (!deps.insurers.get(compagnie)) throw new ApiError('unknown_insurer', `No insurer with code ${compagnie}.`);
  if (input.login.trim() === '' || input.password === '') throw new ApiError('validation_error', 'login and password must not be empty.');
  const extra = input.extra ?? {};
  checkExtraFields(deps, compagnie, extra);
  const now = deps.clock.now();
  deps.secrets.set(secretName(cabinetId, compagnie), input.password);
  // A secret extra field (a second password, a PIN) is kept like the password; a field not given again is forgotten.
  const secretFields = secretExtraFields(deps, compagnie);
  for (const field of secretFields) {
    const value = extra[field];
    if (value === undefined) deps.secrets.delete(extraSecretName(cabinetId, compagnie, field));
    else deps.secrets.set(extraSecretName(cabinetId, compagnie, field), value);
  }
  const plainExtra = Object.fromEntries(Object.entries(extra).filter(([field]) => !secretFields.includes(field)));
  store.upsertCredential(deps.db.orm, {
    cabinetId,
    compagnie,
    login: input.login.trim(),
    extra: JSON.stringify(plainExtra),
    updatedAt: now,
  });
  return { compagnie, login: input.login.trim(), updated_at: new Date(now).toISOString() };
}

export function credentialsConfigured(deps: Deps, cabinetId: string, compagnie: string): boolean {
  return store.findCredential(deps.db.orm, cabinetId, compagnie) !== undefined;
}

/** Who a robot logs in as, without the password; and when the credentials were last set. */
export interface InsurerLogin {
  login: string;
  extra: Record<string, string>;
  updatedAt: number;
}

/** For the robot: the credentials but the password (read from the secret store only to log in). */
export function insurerLogin(deps: Deps, cabinetId: string, compagnie: string): InsurerLogin | undefined {
  const row = store.findCredential(deps.db.orm, cabinetId, compagnie);
  return row && { login: row.login, extra: JSON.parse(row.extra) as Record<string, string>, updatedAt: row.updatedAt };
}

/**
 * For the robot only, when it logs in: the password and the secret extra fields, undefined when the
 * credentials were removed.
 */
export function readInsurerSecrets(
  deps: Deps,
  cabinetId: string,
  compagnie: string,
): { password: string; extra: Record<string, string> } | undefined {
  const password = deps.secrets.get(secretName(cabinetId, compagnie));
  if (password === undefined) return undefined;
  const extra: Record<string, string> = {};
  for (const field of secretExtraFields(deps, compagnie)) {
    const value = deps.secrets.get(extraSecretName(cabinetId, compagnie, field));
    if (value !== undefined) extra[field] = value;
  }
  return { password, extra };
}

/** For a login check, which always logs in: the whole credentials, password and secret fields included. */
export function readInsurerCredentials(deps: Deps, cabinetId: string, compagnie: string): InsurerCredentials | undefined {
  const login = insurerLogin(deps, cabinetId, compagnie);
  const secrets = login && readInsurerSecrets(deps, cabinetId, compagnie);
  return login && secrets ? { login: login.login, password: secrets.password, extra: { ...login.extra, ...secrets.extra } } : undefined;
}

/** What the console shows of a cabinet's credentials for an insurer: never the password. */
export function describeInsurerCredentials(
  deps: Deps,
  cabinetId: string,
  compagnie: string,
): { configured: boolean; login: string | null; updated_at: string | null } {
  const row = store.findCredential(deps.db.orm, cabinetId, compagnie);
  return row
    ? { configured: true, login: row.login, updated_at: new Date(row.updatedAt).toISOString() }
    : { configured: false, login: null, updated_at: null };
}

/** Removes a cabinet's credentials for an insurer (the password from the SecretStore too). False when there were none. */
export function deleteInsurerCredentials(deps: Deps, cabinetId: string, compagnie: string): boolean {
  if (!deps.insurers.get(compagnie)) throw new ApiError('unknown_insurer', `No insurer with code ${compagnie}.`);
  const removed =
    deps.db.orm
      .delete(insurerCredentials)
      .where(and(eq(insurerCredentials.cabinetId, cabinetId), eq(insurerCredentials.compagnie, compagnie)))
      .run().changes > 0;
  deps.secrets.delete(secretName(cabinetId, compagnie));
  for (const field of secretExtraFields(deps, compagnie)) deps.secrets.delete(extraSecretName(cabinetId, compagnie, field));
  return removed;
}

/** The values of these credentials that are secrets: the password and the secret extra fields. */
export function credentialSecrets(deps: Pick<Deps, 'insurers'>, compagnie: string, credentials: InsurerCredentials): string[] {
  const secretFields = secretExtraFields(deps, compagnie);
  return [
    credentials.password,
    ...Object.entries(credentials.extra).flatMap(([field, value]) => (secretFields.includes(field) ? [value] : [])),
  ];
}
