import { z } from 'zod';
import { changeRuleBroken, MAX_USER_EMAIL } from '../../shared/sync-rules.js';
import { USER_ROLES } from '../../shared/tenancy.js';
import { nameBasedUuid } from '../platform/db/name-based-id.js';
import type { Deps } from '../deps.js';
import { recordChange } from '../sync/capture.js';
import { storedTime } from '../sync/stored-values.js';
import type { ApplyContext, SyncedRecords } from '../sync/synced-table.js';
import * as store from './store.js';

/**
 * The cabinet's staff list as it syncs (kind `user`): one record per person, whose id is their email
 * (lower-cased), so that two installs adding the same person make one record, merged field by field.
 * Only who they are and what they may do travels; passwords stay on each install (shared/sync-rules.ts).
 */

/** A user's row as it travels. */
const userFields = z.strictObject({
  email: z.email().max(MAX_USER_EMAIL),
  role: z.enum(USER_ROLES),
  created_at: storedTime,
  disabled_at: storedTime.nullable(),
  removed_at: storedTime.nullable(),
});
type UserFields = z.infer<typeof userFields>;
const SYNCED_FIELDS = new Set(Object.keys(userFields.shape));
const editable = userFields.partial();

/** The local id of the account of this email in this cabinet: the same on every install that adds it. */
export function userIdOf(cabinetId: string, email: string): string {
  return nameBasedUuid(`courtier:cabinet/${cabinetId}/user/${email}`);
}

function toFields(row: store.UserRow): UserFields {
  return { email: row.email, role: row.role, created_at: row.createdAt, disabled_at: row.disabledAt, removed_at: row.removedAt };
}

/**
 * Queues a change of the staff list for the hub, when the cabinet syncs: the whole record (an
 * account added, or added again), or some of its fields. Every field is clocked, a creation's too,
 * since two installs may add the same person. Inside the change's transaction.
 */
export function recordUserChange(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>,
  row: store.UserRow,
  only?: readonly (keyof UserFields)[],
): void {
  recordChange(deps, row.cabinetId, {
    kind: 'user',
    recordId: row.email,
    fields: () => {
      const fields = toFields(row);
      return only === undefined ? fields : Object.fromEntries(only.map((name) => [name, fields[name]]));
    },
  });
}

/** What another install's change did to an account here: for the module that ends its access and audits it. */
export interface PulledUserChange {
  context: ApplyContext;
  cabinetId: string;
  userId: string;
  email: string;
  /** What changed here, as the audit log says it; empty when nothing did. */
  changes: Record<string, unknown>;
  /** The account could be used here and no longer can: its access ends (a removal forgets it). */
  accessEnds: 'disabled' | 'removed' | null;
}

/** Who reacts to a pulled change of the staff list (the account module: sessions, grants, audit). */
export interface UserSyncEffects {
  changed(change: PulledUserChange): void;
}

const usable = (row: store.UserRow | undefined): boolean =>
  row !== undefined && row.removedAt === null && store.disabledInEffect(row) === null;

/** The difference a pulled change made to an account, in the audit log's words. */
function describe(before: store.UserRow | undefined, after: store.UserRow): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  if (before === undefined) changes.created = true;
  if (before?.role !== after.role) changes.role = after.role;
  if (before !== undefined && store.roleInEffect(before) !== store.roleInEffect(after)) changes.role_in_effect = store.roleInEffect(after);
  if ((before?.disabledAt ?? null) !== after.disabledAt) changes.disabled = after.disabledAt !== null;
  if ((before?.removedAt ?? null) !== after.removedAt) changes.removed = after.removedAt !== null;
  const awaiting = [
    ...(after.heldRole !== null && before?.heldRole === null ? ['admin_role'] : []),
    ...(after.heldDisabledAt !== null && before?.heldDisabledAt === null ? ['enabling'] : []),
  ];
  if (awaiting.length > 0) changes.awaiting_confirmation = awaiting;
  return changes;
}

/**
 * The account as a pulled change leaves it. What raises an account's powers here (made an
 * administrator, enabled again) is held back while the account has a password on this install: the
 * record takes the value, so that installs agree, but the account keeps its former role or stays
 * disabled until an administrator of this install confirms (server/tenancy/users.ts). An account
 * without a password here cannot be used until such an administrator gives it one, and a removed one
 * loses its password.
 */
function afterPulled(row: store.UserRow, fields: Partial<UserFields>): store.UserRow {
  const role = fields.role ?? row.role;
  const disabledAt = fields.disabled_at === undefined ? row.disabledAt : fields.disabled_at;
  const removedAt = fields.removed_at === undefined ? row.removedAt : fields.removed_at;
  const createdAt = fields.created_at ?? row.createdAt;
  if (removedAt !== null)
    return {
      ...row,
      role,
      disabledAt,
      removedAt,
      createdAt,
      passwordHash: null,
      mustChangePassword: false,
      heldRole: null,
      heldDisabledAt: null,
    };
  const usable = row.passwordHash !== null;
  const roleInEffect = store.roleInEffect(row);
  return {
    ...row,
    role,
    disabledAt,
    removedAt,
    createdAt,
    heldRole: usable && role === 'admin' && roleInEffect !== 'admin' ? roleInEffect : null,
    heldDisabledAt: usable && disabledAt === null ? store.disabledInEffect(row) : null,
  };
}

function created(cabinetId: string, fields: UserFields): store.UserRow {
  return {
    id: userIdOf(cabinetId, fields.email),
    cabinetId,
    email: fields.email,
    passwordHash: null,
    role: fields.role,
    createdAt: fields.created_at,
    disabledAt: fields.disabled_at,
    mustChangePassword: false,
    removedAt: fields.removed_at,
    heldRole: null,
    heldDisabledAt: null,
  };
}

function knownFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([name]) => SYNCED_FIELDS.has(name)));
}

/**
 * The staff list's side of the sync. A pulled change is refused (set aside) when it breaks the
 * protocol's rules (a password, an id that is not its email), fails the checks of a local write,
 * or would leave the cabinet without an administrator who can act on this install.
 */
export function userRecords(effects: UserSyncEffects): SyncedRecords {
  return {
    kind: 'user',
    unknownFields: (fields) => Object.keys(fields).filter((name) => !SYNCED_FIELDS.has(name)),
    refusal(orm, cabinetId, change) {
      const broken = changeRuleBroken({ kind: 'user', op: change.op, record_id: change.recordId, fields: change.fields });
      if (broken) return { reason: 'operation_refused', message: broken };
      const held = store.findUserInCabinetByEmail(orm, cabinetId, change.recordId);
      const checked = (held ? editable : userFields).safeParse(knownFields(change.fields));
      if (!checked.success) {
        const issues = checked.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || 'fields'}: ${issue.message}`);
        return { reason: 'invalid_fields', message: `user ${held ? 'edit' : 'creation'} refused: ${issues.join('; ')}` };
      }
      if (
        held &&
        store.actsAsAdmin(held) &&
        !store.actsAsAdmin(afterPulled(held, checked.data)) &&
        store.countActiveAdmins(orm, cabinetId) <= 1
      ) {
        return {
          reason: 'operation_refused',
          message: `it would leave the cabinet without an administrator on this computer (${held.email} is the last one): make another user an administrator here, then try again`,
        };
      }
      return null;
    },
    *snapshot(db, cabinetId) {
      for (const row of store.listUsers(db.orm, cabinetId)) yield { recordId: row.email, fields: toFields(row) };
    },
    write(orm, cabinetId, recordId, fields, context) {
      const before = store.findUserInCabinetByEmail(orm, cabinetId, recordId);
      const known = editable.parse(knownFields(fields));
      const after = before ? afterPulled(before, known) : created(cabinetId, userFields.parse({ ...known, email: recordId }));
      if (before) {
        const { id: _id, cabinetId: _cabinet, email: _email, ...columns } = after;
        store.updateUser(orm, cabinetId, before.id, columns);
      } else store.insertUser(orm, after);
      const accessEnds = usable(before) && !usable(after) ? (after.removedAt !== null ? 'removed' : 'disabled') : null;
      effects.changed({ context, cabinetId, userId: after.id, email: after.email, changes: describe(before, after), accessEnds });
      return true;
    },
  };
}
