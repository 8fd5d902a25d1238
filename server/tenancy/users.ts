import type { CabinetUser, UserRole } from '../../shared/console-admin.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { validationError } from '../platform/http/validation.js';
import { hashPassword, temporaryPassword, UNMATCHABLE_HASH, verifyPassword } from './passwords.js';
import * as store from './store.js';
import { recordUserChange, userIdOf } from './sync.js';

/**
 * The cabinet's users, as its administrators (the console) and the CLI manage them. The staff list
 * (who, which role, disabled, removed) is the cabinet's and syncs to its other installs; passwords
 * are each install's own (server/tenancy/sync.ts).
 */

type StaffDeps = Pick<Deps, 'db' | 'clock' | 'syncChanges'>;

function toCabinetUser(row: store.UserRow): CabinetUser {
  const disabledAt = store.disabledInEffect(row);
  return {
    user_id: row.id,
    email: row.email,
    role: store.roleInEffect(row),
    created_at: toIso(row.createdAt),
    disabled_at: disabledAt === null ? null : toIso(disabledAt),
    must_change_password: row.mustChangePassword,
    has_password: row.passwordHash !== null,
    awaiting_confirmation: [
      ...(row.heldRole !== null ? (['admin_role'] as const) : []),
      ...(row.heldDisabledAt !== null ? (['enabling'] as const) : []),
    ],
  };
}

/** The accounts of the cabinet, removed ones left out. */
export function listCabinetUsers(deps: Pick<Deps, 'db'>, cabinetId: string): CabinetUser[] {
  return store
    .listUsers(deps.db.orm, cabinetId)
    .filter((row) => row.removedAt === null)
    .map(toCabinetUser);
}

/**
 * An admin adds an account to their cabinet. Emails are unique within the cabinet (409
 * email_taken); another cabinet's accounts are invisible here, so an admin never learns of them.
 * A removed account of this email comes back, with the new password and role.
 */
export async function addCabinetUser(
  deps: Deps,
  cabinetId: string,
  input: { email: string; password: string; role: UserRole },
): Promise<CabinetUser> {
  const email = input.email.trim().toLowerCase();
  const taken = () =>
    new ApiError(
      'email_taken',
      `An account with the email ${email} already exists in this cabinet: change its role on the Users page instead.`,
    );
  const existing = () => store.findUserInCabinetByEmail(deps.db.orm, cabinetId, email);
  if (existing()?.removedAt === null) throw taken();
  const passwordHash = await hashPassword(input.password, deps.randomBytes(16));
  const now = deps.clock.now();
  const { orm } = deps.db;
  return deps.db.immediateTransaction(() => {
    if (!store.findCabinet(orm, cabinetId)) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
    const removed = existing();
    if (removed?.removedAt === null) throw taken();
    const fresh = {
      passwordHash,
      role: input.role,
      createdAt: now,
      disabledAt: null,
      mustChangePassword: false,
      removedAt: null,
      heldRole: null,
      heldDisabledAt: null,
    };
    const row: store.UserRow = { id: removed?.id ?? userIdOf(cabinetId, email), cabinetId, email, ...fresh };
    if (removed) store.updateUser(orm, cabinetId, row.id, fresh);
    else store.insertUser(orm, row);
    recordUserChange(deps, row);
    return toCabinetUser(row);
  });
}

/**
 * Changes a user's role in the cabinet; the cabinet always keeps at least one admin (409 last_admin).
 * Making an administrator one whose promotion on another install waits here confirms it.
 */
export function changeUserRole(deps: StaffDeps, cabinetId: string, userId: string, role: UserRole): CabinetUser {
  const { orm } = deps.db;
  return deps.db.immediateTransaction(() => {
    const user = findOrFail(orm, cabinetId, userId);
    if (role !== 'admin' && isLastActiveAdmin(orm, user)) throw lastAdmin();
    const row = { ...user, role, heldRole: null };
    store.updateUser(orm, cabinetId, userId, { role, heldRole: null });
    recordUserChange(deps, row, ['role']);
    return toCabinetUser(row);
  });
}

function lastAdmin(): ApiError {
  return new ApiError('last_admin', 'This is the last active administrator of the cabinet: make another user an administrator first.');
}

/** Whether taking this account's admin powers away (a role change, disabling, removal) would leave the cabinet with none. */
function isLastActiveAdmin(orm: Deps['db']['orm'], user: store.UserRow): boolean {
  return store.actsAsAdmin(user) && store.countActiveAdmins(orm, user.cabinetId) <= 1;
}

/** An account of the cabinet that was not removed. */
function findOrFail(orm: Deps['db']['orm'], cabinetId: string, userId: string): store.UserRow {
  const user = store.findUserInCabinet(orm, cabinetId, userId);
  if (!user || user.removedAt !== null) throw new ApiError('not_found', `No user with id ${userId} in this cabinet.`);
  return user;
}

/** The accounts with this email, across cabinets (the CLI's reset of a locked-out admin finds them so). */
export function accountsOfEmail(deps: Pick<Deps, 'db'>, email: string): { userId: string; cabinetId: string; cabinetName: string }[] {
  return store
    .findUsersByEmail(deps.db.orm, email.trim().toLowerCase())
    .filter((user) => user.removedAt === null)
    .map((user) => ({
      userId: user.id,
      cabinetId: user.cabinetId,
      cabinetName: store.findCabinet(deps.db.orm, user.cabinetId)?.name ?? user.cabinetId,
    }));
}

/**
 * A person changes their own password, proving the current one. The hash is checked and made
 * outside the transaction (slow on purpose); the transaction then checks that nobody changed it
 * meanwhile, stores the new one and runs `then` (ending the other sessions) with it.
 */
export async function changeOwnPassword(
  deps: Deps,
  user: { cabinetId: string; userId: string },
  input: { currentPassword: string; newPassword: string },
  then: () => void,
): Promise<'changed' | 'wrong_current_password'> {
  const row = findOrFail(deps.db.orm, user.cabinetId, user.userId);
  if (!(await verifyPassword(input.currentPassword, row.passwordHash ?? UNMATCHABLE_HASH))) return 'wrong_current_password';
  if (input.newPassword.normalize('NFKC') === input.currentPassword.normalize('NFKC')) {
    throw validationError([{ path: 'body.new_password', message: 'choose a password different from the current one' }]);
  }
  const passwordHash = await hashPassword(input.newPassword, deps.randomBytes(16));
  const { orm } = deps.db;
  deps.db.immediateTransaction(() => {
    const now = findOrFail(orm, user.cabinetId, user.userId);
    if (now.passwordHash !== row.passwordHash)
      throw new ApiError('wrong_current_password', 'The password was changed meanwhile (in another window?); sign in again.');
    store.setUserPassword(orm, user.cabinetId, user.userId, passwordHash, false);
    then();
  });
  return 'changed';
}

/**
 * Gives an account a temporary password (returned once: the caller shows it) that must be changed
 * at the next sign-in; `then` runs in the same transaction (ending sessions and grants). This is also
 * how an account added on another install gets its first password on this one.
 */
export async function resetUserPassword(
  deps: Deps,
  cabinetId: string,
  userId: string,
  then: (user: CabinetUser) => void,
): Promise<{ user: CabinetUser; temporaryPassword: string }> {
  findOrFail(deps.db.orm, cabinetId, userId);
  const temporary = temporaryPassword(deps.randomBytes);
  const passwordHash = await hashPassword(temporary, deps.randomBytes(16));
  const { orm } = deps.db;
  const user = deps.db.immediateTransaction(() => {
    const row = findOrFail(orm, cabinetId, userId);
    store.setUserPassword(orm, cabinetId, userId, passwordHash, true);
    const user = toCabinetUser({ ...row, passwordHash, mustChangePassword: true });
    then(user);
    return user;
  });
  return { user, temporaryPassword: temporary };
}

/**
 * Disables (or enables) an account; the cabinet keeps an active admin. Enabling one whose enabling
 * on another install waits here confirms it. `then` runs in the transaction.
 */
export function setUserDisabled(
  deps: StaffDeps,
  cabinetId: string,
  userId: string,
  disabled: boolean,
  then: (user: CabinetUser) => void,
): CabinetUser {
  const { orm } = deps.db;
  return deps.db.immediateTransaction(() => {
    const row = findOrFail(orm, cabinetId, userId);
    if (disabled && isLastActiveAdmin(orm, row)) throw lastAdmin();
    // Disabling twice keeps the first date: it says since when.
    const disabledAt = disabled ? (store.disabledInEffect(row) ?? deps.clock.now()) : null;
    const next = { ...row, disabledAt, heldDisabledAt: null };
    store.updateUser(orm, cabinetId, userId, { disabledAt, heldDisabledAt: null });
    recordUserChange(deps, next, ['disabled_at']);
    const user = toCabinetUser(next);
    then(user);
    return user;
  });
}

/**
 * Removes an account from the cabinet; the cabinet keeps an active admin. The row stays as the
 * staff list's tombstone, without a password. `before` runs first in the same transaction: it
 * deletes what refers to the account's access (sessions, grants).
 */
export function removeCabinetUser(deps: StaffDeps, cabinetId: string, userId: string, before: (user: CabinetUser) => void): CabinetUser {
  const { orm } = deps.db;
  return deps.db.immediateTransaction(() => {
    const row = findOrFail(orm, cabinetId, userId);
    if (isLastActiveAdmin(orm, row)) throw lastAdmin();
    const user = toCabinetUser(row);
    before(user);
    const removed = { removedAt: deps.clock.now(), passwordHash: null, mustChangePassword: false, heldRole: null, heldDisabledAt: null };
    store.updateUser(orm, cabinetId, userId, removed);
    recordUserChange(deps, { ...row, ...removed }, ['removed_at']);
    return user;
  });
}

/**
 * Queues an account whole for the cabinet's other installs, unless `already(email)`: the local
 * administrator a join created, once the first download says whether the cabinet's list had them.
 */
export function shareAccount(deps: StaffDeps, cabinetId: string, userId: string, already: (email: string) => boolean): boolean {
  return deps.db.immediateTransaction(() => {
    const row = store.findUserInCabinet(deps.db.orm, cabinetId, userId);
    if (!row || already(row.email)) return false;
    recordUserChange(deps, row);
    return true;
  });
}
