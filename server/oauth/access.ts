import { ACCESS_TOKEN_PREFIX, type McpScope } from '../../shared/oauth.js';
import type { Deps } from '../deps.js';
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
  scopes: McpScope[];
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Looks up a presented access token: null when unknown, expired or revoked. */
export type AccessTokenAuthenticator = (token: string) => McpAccess | null;

/** How often a grant's last_used_at is written at most: once a minute is enough for the console. */
const GRANT_LAST_USED_RESOLUTION_MS = 60_000;

export function createAccessTokenAuthenticator(deps: Deps): AccessTokenAuthenticator {
  const find = store.prepareFindLiveAccessToken(deps.db.sqlite);
  const touchGrant = store.prepareTouchGrant(deps.db.sqlite);
  // The last write per grant in this process, so that most requests write nothing (bounded).
  const lastUsedWrites = new Map<string, number>();
  return (token: string): McpAccess | null => {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return null;
    const record = find(sha256(token));
    const now = deps.clock.now();
    if (!record || record.expiresAt <= now) return null;
    const lastWrite = lastUsedWrites.get(record.grantId) ?? record.grantLastUsedAt ?? 0;
    if (now - lastWrite >= GRANT_LAST_USED_RESOLUTION_MS) {
      if (lastUsedWrites.size >= 10_000) lastUsedWrites.clear();
      lastUsedWrites.set(record.grantId, now);
      touchGrant(record.grantId, now);
    }
    return {
      grantId: record.grantId,
      clientId: record.clientId,
      clientName: record.clientName ?? 'An unnamed application',
      userId: record.userId,
      userEmail: record.userEmail,
      cabinetId: record.cabinetId,
      cabinetName: record.cabinetName,
      scopes: parseScopes(record.scopes),
      expiresAt: record.expiresAt,
    };
  };
}
