import { hash as digest, randomUUID } from 'node:crypto';
import {
  API_KEY_PREFIX,
  API_KEY_RANDOM_LENGTH,
  createApiKeySchema,
  type ApiKeyEnvironment,
  type ApiKeySummary,
  type CreateApiKeyInput,
  type CreatedApiKey,
} from '../../shared/api-keys.js';
import type { Scope } from '../../shared/scopes.js';
import type { Deps } from '../deps.js';
import { toIso, toIsoOrNull } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { toValidationIssues, validationError } from '../platform/http/validation.js';
import { cabinetExists } from '../tenancy/service.js';
import { compileIpAllowlist } from './ip-allowlist.js';
import * as store from './store.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** How often a key's last_used_at is written at most: once a minute is precise enough for a console. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Uniform base62 characters from random bytes (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number, randomBytes: (n: number) => Buffer): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function hashApiKey(value: string): string {
  return digest('sha256', value, 'hex');
}

function toSummary(row: store.ApiKeyRow): ApiKeySummary {
  return {
    key_id: row.id,
    cabinet_id: row.cabinetId,
    name: row.name,
    environment: row.environment,
    scopes: JSON.parse(row.scopes) as Scope[],
    key_prefix: row.keyPrefix,
    ip_allowlist: row.ipAllowlist === null ? null : (JSON.parse(row.ipAllowlist) as string[]),
    expires_at: toIsoOrNull(row.expiresAt),
    created_at: toIso(row.createdAt),
    revoked_at: toIsoOrNull(row.revokedAt),
    last_used_at: toIsoOrNull(row.lastUsedAt),
  };
}

/** Creates a key; its value is in the result and nowhere else, ever (only its SHA-256 is stored). */
export function createApiKey(deps: Deps, cabinetId: string, input: CreateApiKeyInput): CreatedApiKey {
  const parsed = createApiKeySchema.safeParse(input);
  if (!parsed.success) throw validationError(toValidationIssues(parsed.error, undefined, input));
  const { name, environment, scopes, ip_allowlist, expires_at } = parsed.data;
  if (!cabinetExists(deps, cabinetId)) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
  const now = deps.clock.now();
  const expiresAt = expires_at === undefined ? null : Date.parse(expires_at);
  if (expiresAt !== null && expiresAt <= now) {
    throw validationError([{ path: 'expires_at', message: 'must be in the future' }]);
  }
  const key = API_KEY_PREFIX[environment] + randomBase62(API_KEY_RANDOM_LENGTH, deps.randomBytes);
  const row: store.ApiKeyRow = {
    id: randomUUID(),
    cabinetId,
    name,
    environment,
    scopes: JSON.stringify(scopes),
    keyHash: hashApiKey(key),
    keyPrefix: key.slice(0, API_KEY_PREFIX[environment].length + 4),
    ipAllowlist: ip_allowlist === undefined ? null : JSON.stringify(ip_allowlist),
    expiresAt,
    createdAt: now,
    revokedAt: null,
    lastUsedAt: null,
  };
  store.insertKey(deps.db.orm, row);
  return { ...toSummary(row), key };
}

export function listApiKeys(deps: Deps, cabinetId: string): ApiKeySummary[] {
  return store.listKeys(deps.db.orm, cabinetId).map(toSummary);
}

/** Revokes a key of the cabinet. Revoking an already revoked key is not an error. */
export function revokeApiKey(deps: Deps, cabinetId: string, keyId: string): ApiKeySummary {
  store.revokeKey(deps.db.orm, cabinetId, keyId, deps.clock.now());
  const row = store.findKey(deps.db.orm, cabinetId, keyId);
  if (!row) throw new ApiError('not_found', `No API key with id ${keyId} in this cabinet.`);
  return toSummary(row);
}

/** The operator's revoke (CLI), which knows only the key id. */
export function revokeApiKeyById(deps: Deps, keyId: string): ApiKeySummary {
  const cabinetId = store.findKeyCabinet(deps.db.orm, keyId);
  if (cabinetId === undefined) throw new ApiError('not_found', `No API key with id ${keyId}.`);
  return revokeApiKey(deps, cabinetId, keyId);
}

export interface AuthenticatedKey {
  keyId: string;
  cabinetId: string;
  environment: ApiKeyEnvironment;
  scopes: readonly Scope[];
}

const KEY_SHAPE = new RegExp(`^svc_(prod|test)_[0-9A-Za-z]{${API_KEY_RANDOM_LENGTH}}$`);

/** A key this instance has seen: what of its row never changes, read once (see prepareKeyLookups). */
interface KnownKey {
  key: AuthenticatedKey;
  expiresAt: number | null;
  /** Null when the key has no allowlist. */
  allows: ((ip: string) => boolean) | null;
  /** The last last_used_at written or read, to write it at most once a minute. */
  lastUsedAt: number;
}

/** Only keys found in the database, not revoked, are kept: at most one entry per key; the oldest goes first. */
const KNOWN_KEYS_MAX = 1024;

/**
 * Builds the function that turns a presented key into its record, or throws the precise 401/403.
 * Every request reads the key's revocation from SQLite, so that a revocation by the CLI or another
 * process takes effect on the next request, and a deleted key fails; what never changes in a
 * key's row (its id, cabinet, environment, scopes, allowlist and expiry) is read on its first use.
 */
export function createKeyAuthenticator(deps: Deps): (presented: string, ip: string) => AuthenticatedKey {
  const lookups = store.prepareKeyLookups(deps.db.orm);
  // By the key's SHA-256, never the key itself: no secret outlives its request in this process.
  const known = new Map<string, KnownKey>();
  const invalid = (): ApiError =>
    new ApiError(
      'invalid_api_key',
      'This service does not know this API key. Check that it was copied whole, and that it was created for this service: a key made for another install, or in another data folder, is unknown here.',
    );

  const firstUse = (hash: string): { entry: KnownKey; revokedAt: number | null } => {
    const row = lookups.findByHash(hash);
    if (!row) throw invalid();
    const entry: KnownKey = {
      key: Object.freeze({
        keyId: row.id,
        cabinetId: row.cabinetId,
        environment: row.environment,
        scopes: Object.freeze(JSON.parse(row.scopes) as Scope[]),
      }),
      expiresAt: row.expiresAt,
      allows: row.ipAllowlist === null ? null : compileIpAllowlist(JSON.parse(row.ipAllowlist) as string[]),
      lastUsedAt: row.lastUsedAt ?? 0,
    };
    if (row.revokedAt === null) {
      if (known.size >= KNOWN_KEYS_MAX) known.delete(known.keys().next().value as string);
      known.set(hash, entry);
    }
    return { entry, revokedAt: row.revokedAt };
  };

  return (presented, ip) => {
    if (!KEY_SHAPE.test(presented)) throw invalid();
    const hash = hashApiKey(presented);
    let entry = known.get(hash);
    let revokedAt: number | null | undefined;
    if (entry) {
      revokedAt = lookups.revokedAtByHash(hash);
      if (revokedAt === undefined) {
        known.delete(hash);
        throw invalid();
      }
    } else {
      ({ entry, revokedAt } = firstUse(hash));
    }
    const now = deps.clock.now();
    if (revokedAt !== null)
      throw new ApiError('api_key_revoked', `This API key was revoked on ${toIso(revokedAt)}. Create a new one in the console.`);
    if (entry.expiresAt !== null && entry.expiresAt <= now) {
      throw new ApiError('api_key_expired', `This API key expired on ${toIso(entry.expiresAt)}. Create a new one in the console.`);
    }
    if (entry.allows && !entry.allows(ip)) throw new ApiError('ip_not_allowed', `Requests from ${ip} are not allowed for this API key.`);
    if (now - entry.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      entry.lastUsedAt = now;
      store.touchLastUsed(deps.db.orm, entry.key.cabinetId, entry.key.keyId, now);
    }
    return entry.key;
  };
}
