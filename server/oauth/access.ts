import type { McpScope } from '../../shared/oauth.js';

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
