import { randomUUID } from 'node:crypto';
import type { CabinetChoices } from '../../shared/oauth.js';
import { initCabinetSchema, type InitCabinetInput, type UnattendedHumanSteps } from '../../shared/tenancy.js';
import { recordAudit, type AuditActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { toValidationIssues, validationError } from '../platform/http/validation.js';
import { hashPassword, UNMATCHABLE_HASH, verifyPassword } from './passwords.js';
import * as store from './store.js';
import { userIdOf } from './sync.js';

/**
 * Creates a cabinet with its first (admin) user. On a data dir that already holds cabinets this
 * adds another one: one instance serves several cabinets, each isolated, and an email may have an
 * account in each (emails are unique per cabinet).
 */
export async function initCabinet(deps: Deps, input: InitCabinetInput): Promise<{ cabinet_id: string; user_id: string }> {
  return createCabinetWithAdmin(deps, input, { issuePath: undefined });
}

/**
 * Creates, with its first (admin) user, a cabinet that exists elsewhere under this id: the local copy
 * of a synced cabinet (`courtier sync join`). `then` runs in the same transaction, after the inserts.
 */
export async function adoptCabinet(
  deps: Deps,
  input: InitCabinetInput & { cabinetId: string },
  then: () => void,
): Promise<{ cabinet_id: string; user_id: string }> {
  return createCabinetWithAdmin(deps, input, {
    issuePath: undefined,
    cabinetId: input.cabinetId,
    check: (orm) => {
      if (store.findCabinet(orm, input.cabinetId))
        throw new ApiError('cabinet_already_here', `This data dir already holds the cabinet ${input.cabinetId}.`);
    },
    then,
  });
}

/** The cabinets where an email has an account (the audit log files a failed sign-in under each). */
export function cabinetIdsOfEmail(deps: Pick<Deps, 'db'>, email: string): string[] {
  return store.findUsersByEmail(deps.db.orm, email.trim().toLowerCase()).map((user) => user.cabinetId);
}

export function cabinetName(deps: Pick<Deps, 'db'>, cabinetId: string): string | undefined {
  return store.findCabinet(deps.db.orm, cabinetId)?.name;
}

/**
 * Validates, hashes the password outside the transaction (it is slow on purpose), then runs
 * `check` and the two inserts in one IMMEDIATE transaction, so that the check holds at the insert.
 */
async function createCabinetWithAdmin(
  deps: Deps,
  input: InitCabinetInput,
  options: { issuePath: string | undefined; cabinetId?: string; check?: (orm: Deps['db']['orm']) => void; then?: () => void },
): Promise<{ cabinet_id: string; user_id: string }> {
  const parsed = initCabinetSchema.safeParse(input);
  if (!parsed.success) throw validationError(toValidationIssues(parsed.error, options.issuePath, input));
  const { cabinet, email, password } = parsed.data;
  const passwordHash = await hashPassword(password, deps.randomBytes(16));
  const now = deps.clock.now();
  const cabinetId = options.cabinetId ?? randomUUID();
  const userId = userIdOf(cabinetId, email);
  const { orm } = deps.db;
  deps.db.immediateTransaction(() => {
    options.check?.(orm);
    store.insertCabinet(orm, {
      id: cabinetId,
      name: cabinet,
      llmDataSharing: false,
      unattendedHumanSteps: 'wait',
      orias: null,
      address: null,
      createdAt: now,
    });
    store.insertUser(orm, {
      id: userId,
      cabinetId,
      email,
      passwordHash,
      role: 'admin',
      createdAt: now,
      disabledAt: null,
      mustChangePassword: false,
    });
    options.then?.();
  });
  return { cabinet_id: cabinetId, user_id: userId };
}

export function cabinetExists(deps: Deps, cabinetId: string): boolean {
  return store.findCabinet(deps.db.orm, cabinetId) !== undefined;
}

export function listCabinets(deps: Deps): { cabinet_id: string; name: string; created_at: string }[] {
  return store.listCabinets(deps.db.orm).map((c) => ({ cabinet_id: c.id, name: c.name, created_at: new Date(c.createdAt).toISOString() }));
}

export interface CabinetSettings {
  llm_data_sharing: boolean;
  unattended_human_steps: UnattendedHumanSteps;
  /** Its ORIAS number and postal address, on the documents it gives clients; null until set. */
  orias: string | null;
  address: string | null;
}

export function getCabinetSettings(deps: Pick<Deps, 'db'>, cabinetId: string): CabinetSettings {
  const llmDataSharing = store.findLlmDataSharing(deps.db.orm, cabinetId);
  if (llmDataSharing === undefined) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
  const identity = store.findIdentity(deps.db.orm, cabinetId);
  return {
    llm_data_sharing: llmDataSharing,
    unattended_human_steps: store.findUnattendedHumanSteps(deps.db.orm, cabinetId) ?? 'wait',
    orias: identity?.orias ?? null,
    address: identity?.address ?? null,
  };
}

/** Whether this cabinet's robots stop an integration's job before its portal asks a person (read at enqueue). */
export function stopsUnattendedHumanSteps(deps: Pick<Deps, 'db'>, cabinetId: string): boolean {
  return store.findUnattendedHumanSteps(deps.db.orm, cabinetId) === 'stop';
}

/** An admin decides what an integration's job does when nobody is there to answer its portal: audited. */
export function changeUnattendedHumanSteps(
  deps: Pick<Deps, 'db' | 'clock' | 'keys'>,
  cabinetId: string,
  value: UnattendedHumanSteps,
  actor: AuditActor,
): CabinetSettings {
  return deps.db.immediateTransaction(() => {
    const before = getCabinetSettings(deps, cabinetId).unattended_human_steps;
    if (!store.setUnattendedHumanSteps(deps.db.orm, cabinetId, value)) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
    if (before !== value)
      recordAudit(deps, {
        cabinetId,
        action: 'settings.unattended_human_steps_changed',
        actor,
        details: { unattended_human_steps: value },
      });
    return getCabinetSettings(deps, cabinetId);
  });
}

/** An admin sets the cabinet's ORIAS number and address (null clears one), which its advice documents print: audited. */
export function changeCabinetIdentity(
  deps: Pick<Deps, 'db' | 'clock' | 'keys'>,
  cabinetId: string,
  identity: { orias?: string | null; address?: string | null },
  actor: AuditActor,
): CabinetSettings {
  return deps.db.immediateTransaction(() => {
    const before = getCabinetSettings(deps, cabinetId);
    if (!store.setIdentity(deps.db.orm, cabinetId, identity)) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
    const after = getCabinetSettings(deps, cabinetId);
    if (before.orias !== after.orias || before.address !== after.address)
      recordAudit(deps, { cabinetId, action: 'settings.identity_changed', actor, details: { orias: after.orias, address: after.address } });
    return after;
  });
}

/** While off (the default), personal data in webhook payloads and MCP results is masked. */
export function setLlmDataSharing(deps: Pick<Deps, 'db'>, cabinetId: string, enabled: boolean): CabinetSettings {
  if (!store.setLlmDataSharing(deps.db.orm, cabinetId, enabled)) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
  return getCabinetSettings(deps, cabinetId);
}

/** A person turns the sharing on or off (the console, the CLI): a change is audited, as it decides what leaves the cabinet. */
export function changeLlmDataSharing(
  deps: Pick<Deps, 'db' | 'clock' | 'keys'>,
  cabinetId: string,
  enabled: boolean,
  actor: AuditActor,
): CabinetSettings {
  return deps.db.immediateTransaction(() => {
    const before = getCabinetSettings(deps, cabinetId).llm_data_sharing;
    const settings = setLlmDataSharing(deps, cabinetId, enabled);
    if (before !== enabled)
      recordAudit(deps, { cabinetId, action: 'settings.llm_data_sharing_changed', actor, details: { llm_data_sharing: enabled } });
    return settings;
  });
}

/** A signed-in person, as the console and the OAuth consent see them. */
export interface UserIdentity {
  userId: string;
  email: string;
  role: string;
  cabinetId: string;
  cabinetName: string;
  /** Its password was reset: the console lets it do nothing but choose a new one. */
  mustChangePassword: boolean;
}

/**
 * The person behind an account that may be used, with the role in effect here; undefined when it is
 * unknown, disabled or removed, on this install or another of the cabinet (its sessions then end).
 */
export function describeUser(deps: Pick<Deps, 'db'>, userId: string): UserIdentity | undefined {
  const user = store.findUser(deps.db.orm, userId);
  const cabinet = user && store.findCabinet(deps.db.orm, user.cabinetId);
  if (!user || !cabinet || store.disabledInEffect(user) !== null || user.removedAt !== null) return undefined;
  return {
    userId: user.id,
    email: user.email,
    role: store.roleInEffect(user),
    cabinetId: cabinet.id,
    cabinetName: cabinet.name,
    mustChangePassword: user.mustChangePassword,
  };
}

export type PasswordCheck =
  | { kind: 'none' }
  /** The password is right, but every account it opens is disabled. */
  | { kind: 'disabled' }
  /** shared: the email also has accounts in other cabinets, which this password did not open. */
  | { kind: 'one'; identity: UserIdentity; shared: boolean }
  /** The password opens accounts in several cabinets: the person has to choose one. */
  | { kind: 'several'; cabinets: CabinetChoices };

/**
 * The accounts this email and password open (emails are unique per cabinet, so there may be
 * several). Every account with the email is checked, at once, and an unknown email is checked
 * against a hash no password matches, so that the response time says little about how many
 * accounts the email has. An account without a password on this install (added on another, or
 * removed) is checked against that hash too: refused as a wrong password is. With `cabinetId`,
 * only that cabinet's account counts.
 */
export async function verifyUserPassword(
  deps: Pick<Deps, 'db'>,
  email: string,
  password: string,
  cabinetId?: string,
): Promise<PasswordCheck> {
  const candidates = store.findUsersByEmail(deps.db.orm, email.trim().toLowerCase());
  const hashes = candidates.length > 0 ? candidates.map((u) => u.passwordHash ?? UNMATCHABLE_HASH) : [UNMATCHABLE_HASH];
  const verdicts = await Promise.all(hashes.map((hash) => verifyPassword(password, hash)));
  const matching = candidates.filter((user, i) => verdicts[i] === true && (cabinetId === undefined || user.cabinetId === cabinetId));
  const identities = matching
    .map((user) => describeUser(deps, user.id))
    .filter((identity): identity is UserIdentity => identity !== undefined);
  const [first] = identities;
  // Said only to whoever knows the password: "disabled" tells a guesser nothing more than "wrong".
  if (first === undefined) return matching.some((user) => store.disabledInEffect(user) !== null) ? { kind: 'disabled' } : { kind: 'none' };
  if (identities.length === 1) return { kind: 'one', identity: first, shared: candidates.length > 1 };
  const cabinets = identities
    .map((i) => ({ cabinet_id: i.cabinetId, name: i.cabinetName }))
    .sort((a, b) => a.name.localeCompare(b.name, 'fr'));
  return { kind: 'several', cabinets };
}

// ---- First-run setup and the cabinet's users (console) ----

/** Whether the install has no cabinet yet: the console then opens on first-run setup. */
export function setupNeeded(deps: Pick<Deps, 'db'>): boolean {
  return store.countCabinets(deps.db.orm) === 0;
}

/**
 * First-run setup: the first cabinet and its admin, only while the install has none. The check and
 * the inserts share one IMMEDIATE transaction, so of two setups at once exactly one wins.
 */
export async function setupFirstCabinet(deps: Deps, input: InitCabinetInput): Promise<{ cabinet_id: string; user_id: string }> {
  // Cheap refusal before the (deliberately slow) password hash; the transaction checks again.
  if (initCabinetSchema.safeParse(input).success && !setupNeeded(deps)) throw setupDone();
  return createCabinetWithAdmin(deps, input, {
    issuePath: 'body',
    check: (orm) => {
      if (store.countCabinets(orm) > 0) throw setupDone();
    },
  });
}

function setupDone(): ApiError {
  return new ApiError('setup_already_done', 'Courtier is already set up: sign in with an existing account instead.');
}
