import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { cabinets, users } from '../tenancy/schema.js';

/** Dynamically registered public clients (RFC 7591). Lists are JSON arrays. */
export const oauthClients = sqliteTable('oauth_clients', {
  id: text('id').primaryKey(),
  name: text('name'),
  redirectUris: text('redirect_uris').notNull(),
  grantTypes: text('grant_types').notNull(),
  responseTypes: text('response_types').notNull(),
  scope: text('scope'),
  createdAt: integer('created_at').notNull(),
});

/** An authorize request waiting for the user's decision on the consent page. */
export const oauthConsentRequests = sqliteTable('oauth_consent_requests', {
  id: text('id').primaryKey(),
  clientId: text('client_id')
    .notNull()
    .references(() => oauthClients.id),
  userId: text('user_id')
    .notNull()
    .references(() => users.id),
  cabinetId: text('cabinet_id')
    .notNull()
    .references(() => cabinets.id),
  redirectUri: text('redirect_uri').notNull(),
  scopes: text('scopes').notNull(),
  state: text('state'),
  codeChallenge: text('code_challenge').notNull(),
  resource: text('resource'),
  createdAt: integer('created_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
  answeredAt: integer('answered_at'),
});

/**
 * A grant is a token family: what one consent gave one client. Replaying its code or a rotated
 * refresh token revokes it, and with it every token it issued.
 */
export const oauthGrants = sqliteTable(
  'oauth_grants',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    scopes: text('scopes').notNull(),
    resource: text('resource'),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
    /** When one of its access tokens was last used on /mcp, to the minute (written at most once a minute). */
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [index('oauth_grants_cabinet_idx').on(t.cabinetId, t.createdAt), index('oauth_grants_user_idx').on(t.userId, t.createdAt)],
);

export const oauthCodes = sqliteTable('oauth_codes', {
  codeHash: text('code_hash').primaryKey(),
  grantId: text('grant_id')
    .notNull()
    .references(() => oauthGrants.id),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  expiresAt: integer('expires_at').notNull(),
  usedAt: integer('used_at'),
});

export const OAUTH_TOKEN_KINDS = ['access', 'refresh'] as const;

/** Access and refresh tokens, by SHA-256 only. */
export const oauthTokens = sqliteTable(
  'oauth_tokens',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    kind: text('kind', { enum: OAUTH_TOKEN_KINDS }).notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id),
    scopes: text('scopes').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('oauth_tokens_grant_idx').on(t.grantId)],
);
