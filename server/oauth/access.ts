import { ACCESS_TOKEN_PREFIX, type McpScope } from '../../shared/oauth.js';
import type { Deps } from '../deps.js';
import { describeUser } from '../tenancy/service.js';
import { parseScopes, sha256 } from './common.js';
import * as store from './store.js';

/** What a valid MCP access token grants: who, for which cabinet, through which client, until when. */
export interface McpAccess {
  /** The consent this token was issued under: refreshed tokens share it, and so its rate limit. */
  grantId: string;
  clientId: string;
  clientName: string;
  userId: string;
  userEmail: string;
  cabinetId: string;
  cabinetName: string;
  scopes: readonly McpScope[];
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Looks up a presented access token: null when unknown, expired or revoked. */
export type AccessTokenAuthenticator = (token: string) => McpAccess | null;

/** How often a grant's last_used_at is written at most: once a minute is enough for the console. */
const GRANT_LAST_USED_RESOLUTION_MS = 60_000;

/** Only live tokens found in the database are kept, the oldest going first: refreshed tokens replace their entries over time. */
const KNOWN_TOKENS_MAX = 10_000;

/**
 * Every request reads whether its token is still live, so that a revocation (of the token, of its
 * grant, or of the user's grants) takes effect on the next request; the rest of its record is
 * read on its first use.
 */
export function createAccessTokenAuthenticator(deps: Deps): AccessTokenAuthenticator {
  const lookups = store.prepareAccessTokenLookups(deps.db.orm);
  const touchGrant = store.prepareTouchGrant(deps.db.orm);
  // Each token's access (which never changes, see prepareAccessTokenLookups), by the token's
  // SHA-256, never the token itself: no secret outlives its request in this process.
  const known = new Map<string, McpAccess>();
  // The last write per grant in this process, so that most requests write nothing (bounded).
  const lastUsedWrites = new Map<string, number>();

  const firstUse = (hash: string, now: number): McpAccess | null => {
    const record = lookups.findLive(hash);
    if (!record || record.expiresAt <= now) return null;
    // The person and the cabinet as their module says. Later requests rely on the grant: disabling or removing an account revokes its grants.
    const identity = describeUser(deps, record.userId);
    if (!identity || identity.cabinetId !== record.cabinetId) return null;
    const access: McpAccess = Object.freeze({
      grantId: record.grantId,
      clientId: record.clientId,
      clientName: record.clientName ?? 'An unnamed application',
      userId: record.userId,
      userEmail: identity.email,
      cabinetId: record.cabinetId,
      cabinetName: identity.cabinetName,
      scopes: Object.freeze(parseScopes(record.scopes)),
      expiresAt: record.expiresAt,
    });
    if (!lastUsedWrites.has(record.grantId)) lastUsedWrites.set(record.grantId, record.grantLastUsedAt ?? 0);
    if (known.size >= KNOWN_TOKENS_MAX) known.delete(known.keys().next().value as string);
    known.set(hash, access);
    return access;
  };

  return (token: string): McpAccess | null => {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return null;
    const hash = sha256(token);
    const now = deps.clock.now();
    let access = known.get(hash) ?? null;
    if (!access) access = firstUse(hash, now);
    else if (!lookups.isLive(hash)) {
      known.delete(hash);
      access = null;
    }
    if (!access || access.expiresAt <= now) return null;
    const lastWrite = lastUsedWrites.get(access.grantId) ?? 0;
    if (now - lastWrite >= GRANT_LAST_USED_RESOLUTION_MS) {
      if (lastUsedWrites.size >= 10_000) lastUsedWrites.clear();
      lastUsedWrites.set(access.grantId, now);
      touchGrant(access.grantId, now);
    }
    return access;
  };
}
