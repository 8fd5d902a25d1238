import { randomUUID } from 'node:crypto';
import { initCabinetSchema, type InitCabinetInput } from '../../shared/tenancy.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { toValidationIssues, validationError } from '../http/validation.js';
import { hashPassword, verifyPassword } from './passwords.js';
import * as store from './store.js';

export class DuplicateEmailError extends Error {
  override name = 'DuplicateEmailError';
}

/**
 * Creates a cabinet with its first (admin) user. On a data dir that already holds cabinets this
 * adds another one: one instance serves several cabinets, each isolated.
 */
export async function initCabinet(deps: Deps, input: InitCabinetInput): Promise<{ cabinet_id: string; user_id: string }> {
  const parsed = initCabinetSchema.safeParse(input);
  if (!parsed.success) throw validationError(toValidationIssues(parsed.error));
  const { cabinet, email, password } = parsed.data;
  const passwordHash = await hashPassword(password, deps.randomBytes(16));
  const now = deps.clock.now();
  const cabinetId = randomUUID();
  const userId = randomUUID();
  const { orm, sqlite } = deps.db;
  sqlite.transaction(() => {
    if (store.findUserByEmail(orm, email)) throw new DuplicateEmailError(`A user with the email ${email} already exists.`);
    store.insertCabinet(orm, { id: cabinetId, name: cabinet, llmDataSharing: false, createdAt: now });
    store.insertUser(orm, { id: userId, cabinetId, email, passwordHash, role: 'admin', createdAt: now });
  }).immediate();
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
}

export function getCabinetSettings(deps: Pick<Deps, 'db'>, cabinetId: string): CabinetSettings {
  const cabinet = store.findCabinet(deps.db.orm, cabinetId);
  if (!cabinet) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
  return { llm_data_sharing: cabinet.llmDataSharing };
}

/** While off (the default), personal data in webhook payloads and MCP results is masked. */
export function setLlmDataSharing(deps: Pick<Deps, 'db'>, cabinetId: string, enabled: boolean): CabinetSettings {
  if (!store.setLlmDataSharing(deps.db.orm, cabinetId, enabled)) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
  return { llm_data_sharing: enabled };
}

/** A signed-in person, as the console and the OAuth consent see them. */
export interface UserIdentity {
  userId: string;
  email: string;
  role: string;
  cabinetId: string;
  cabinetName: string;
}

export function describeUser(deps: Pick<Deps, 'db'>, userId: string): UserIdentity | undefined {
  const user = store.findUser(deps.db.orm, userId);
  const cabinet = user && store.findCabinet(deps.db.orm, user.cabinetId);
  if (!user || !cabinet) return undefined;
  return { userId: user.id, email: user.email, role: user.role, cabinetId: cabinet.id, cabinetName: cabinet.name };
}

/**
 * The user with this email and password, or null. An unknown email still costs one scrypt, so
 * that the response time does not tell which emails have accounts.
 */
export async function verifyUserPassword(deps: Pick<Deps, 'db' | 'randomBytes'>, email: string, password: string): Promise<UserIdentity | null> {
  const user = store.findUserByEmail(deps.db.orm, email.trim().toLowerCase());
  if (!user) {
    await hashPassword(password, deps.randomBytes(16));
    return null;
  }
  if (!(await verifyPassword(password, user.passwordHash))) return null;
  return describeUser(deps, user.id) ?? null;
}
