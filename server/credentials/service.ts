import { and, eq } from 'drizzle-orm';
import type { InsurerCredentials } from '@courtier/adapter-kit';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { insurerCredentials } from './schema.js';
import * as store from './store.js';

function secretName(cabinetId: string, compagnie: string): string {
  return `insurer-password:${cabinetId}:${compagnie}`;
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
  const now = deps.clock.now();
  deps.secrets.set(secretName(cabinetId, compagnie), input.password);
  store.upsertCredential(deps.db.orm, {
    cabinetId,
    compagnie,
    login: input.login.trim(),
    extra: JSON.stringify(input.extra ?? {}),
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

/** For the robot only, when it logs in: the password, undefined when the credentials were removed. */
export function readInsurerPassword(deps: Deps, cabinetId: string, compagnie: string): string | undefined {
  return deps.secrets.get(secretName(cabinetId, compagnie));
}

/** For a login check, which always logs in: the whole credentials, password included. */
export function readInsurerCredentials(deps: Deps, cabinetId: string, compagnie: string): InsurerCredentials | undefined {
  const login = insurerLogin(deps, cabinetId, compagnie);
  const password = login && readInsurerPassword(deps, cabinetId, compagnie);
  return login && password !== undefined ? { login: login.login, password, extra: login.extra } : undefined;
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
  return removed;
}
