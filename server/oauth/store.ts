import { and, desc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import { oauthClients, oauthCodes, oauthConsentRequests, oauthGrants, oauthTokens } from './schema.js';

export type ClientRow = typeof oauthClients.$inferSelect;
export type ConsentRequestRow = typeof oauthConsentRequests.$inferSelect;
export type GrantRow = typeof oauthGrants.$inferSelect;
export type CodeRow = typeof oauthCodes.$inferSelect;
export type TokenRow = typeof oauthTokens.$inferSelect;

const P = sql.placeholder;

export function insertClient(orm: Orm, row: ClientRow): void {
  orm.insert(oauthClients).values(row).run();
}

export function findClient(orm: Orm, clientId: string): ClientRow | undefined {
  return orm.select().from(oauthClients).where(eq(oauthClients.id, clientId)).get();
}

export function insertConsentRequest(orm: Orm, row: ConsentRequestRow): void {
  orm.insert(oauthConsentRequests).values(row).run();
}

export function findConsentRequest(orm: Orm, id: string): ConsentRequestRow | undefined {
  return orm.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.id, id)).get();
}

/** Marks a consent request answered; false when it already was (a double submit). */
export function answerConsentRequest(orm: Orm, id: string, at: number): boolean {
  return (
    orm
      .update(oauthConsentRequests)
      .set({ answeredAt: at })
      .where(and(eq(oauthConsentRequests.id, id), isNull(oauthConsentRequests.answeredAt)))
      .run().changes > 0
  );
}

export function insertGrant(orm: Orm, row: GrantRow): void {
  orm.insert(oauthGrants).values(row).run();
}

export function findGrant(orm: Orm, grantId: string): GrantRow | undefined {
  return orm.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)).get();
}

/** Revokes a grant and every token it issued. */
export function revokeGrant(orm: Orm, grantId: string, at: number): void {
  orm
    .update(oauthGrants)
    .set({ revokedAt: at })
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)))
    .run();
  orm
    .update(oauthTokens)
    .set({ revokedAt: at })
    .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)))
    .run();
}

export function insertCode(orm: Orm, row: CodeRow): void {
  orm.insert(oauthCodes).values(row).run();
}

export function findCode(orm: Orm, codeHash: string): CodeRow | undefined {
  return orm.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash)).get();
}

/** Spends a code; false when it had been spent already. */
export function useCode(orm: Orm, codeHash: string, at: number): boolean {
  return (
    orm
      .update(oauthCodes)
      .set({ usedAt: at })
      .where(and(eq(oauthCodes.codeHash, codeHash), isNull(oauthCodes.usedAt)))
      .run().changes > 0
  );
}

export function insertToken(orm: Orm, row: TokenRow): void {
  orm.insert(oauthTokens).values(row).run();
}

export function findToken(orm: Orm, tokenHash: string): TokenRow | undefined {
  return orm.select().from(oauthTokens).where(eq(oauthTokens.tokenHash, tokenHash)).get();
}

/** Revokes one token; false when it was revoked already. */
export function revokeToken(orm: Orm, tokenId: string, at: number): boolean {
  return (
    orm
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.id, tokenId), isNull(oauthTokens.revokedAt)))
      .run().changes > 0
  );
}

export interface AccessTokenRecord {
  scopes: string;
  expiresAt: number;
  clientId: string;
  clientName: string | null;
  userId: string;
  cabinetId: string;
  grantId: string;
  grantLastUsedAt: number | null;
}

/** An access token, by its hash, neither it nor its grant revoked. */
const liveAccessToken = () =>
  and(
    eq(oauthTokens.tokenHash, P('tokenHash')),
    eq(oauthTokens.kind, 'access'),
    isNull(oauthTokens.revokedAt),
    isNull(oauthGrants.revokedAt),
  );

const ACCESS_TOKEN_RECORD = preparedQuery((orm) =>
  orm
    .select({
      scopes: oauthTokens.scopes,
      expiresAt: oauthTokens.expiresAt,
      clientId: oauthGrants.clientId,
      clientName: oauthClients.name,
      userId: oauthGrants.userId,
      cabinetId: oauthGrants.cabinetId,
      grantId: oauthGrants.id,
      grantLastUsedAt: oauthGrants.lastUsedAt,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(liveAccessToken()),
);

// One small integer: the driver copies no string.
const ACCESS_TOKEN_LIVE = preparedQuery((orm) =>
  orm
    .select({ live: sql<number>`1` })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(liveAccessToken()),
);

/**
 * The lookups of an MCP request's access token, over the unique hash index, prepared once
 * (prepared-query.ts): the token's record (what never changes after its issue: nothing updates a
 * token's scopes or expiry, or its grant's client, user and cabinet), read on its first use, and
 * whether it is still live (neither it nor its grant revoked nor deleted), read on every request.
 * Expiry is checked by the caller, against its clock.
 */
export function prepareAccessTokenLookups(orm: Orm) {
  const record = ACCESS_TOKEN_RECORD(orm);
  const live = ACCESS_TOKEN_LIVE(orm);
  return {
    findLive: (tokenHash: string): AccessTokenRecord | undefined => record.get({ tokenHash }),
    isLive(tokenHash: string): boolean {
      return live.get({ tokenHash }) !== undefined;
    },
  };
}

const TOUCH_GRANT = preparedQuery((orm) =>
  orm
    .update(oauthGrants)
    .set({ lastUsedAt: sql`${P('at')}` })
    .where(and(eq(oauthGrants.id, P('grantId')), or(isNull(oauthGrants.lastUsedAt), lt(oauthGrants.lastUsedAt, P('at'))))),
);

/** Records a use of a grant's access token (the caller writes at most once a minute per grant). */
export function prepareTouchGrant(orm: Orm): (grantId: string, at: number) => void {
  const touch = TOUCH_GRANT(orm);
  return (grantId, at) => void touch.run({ grantId, at });
}

export interface ConnectedAppRow {
  grantId: string;
  clientId: string;
  clientName: string | null;
  scopes: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/**
 * A user's grants that still stand: not revoked, and with something left to use (a live token, or
 * a code not yet exchanged). Newest first.
 */
function grantStands(now: number) {
  const liveToken = sql`exists (select 1 from ${oauthTokens} where ${oauthTokens.grantId} = ${oauthGrants.id} and ${oauthTokens.revokedAt} is null and ${oauthTokens.expiresAt} > ${now})`;
  const openCode = sql`exists (select 1 from ${oauthCodes} where ${oauthCodes.grantId} = ${oauthGrants.id} and ${oauthCodes.usedAt} is null and ${oauthCodes.expiresAt} > ${now})`;
  return and(isNull(oauthGrants.revokedAt), or(liveToken, openCode));
}

export function listLiveGrantsOfUser(orm: Orm, cabinetId: string, userId: string, now: number): ConnectedAppRow[] {
  return orm
    .select({
      grantId: oauthGrants.id,
      clientId: oauthGrants.clientId,
      clientName: oauthClients.name,
      scopes: oauthGrants.scopes,
      createdAt: oauthGrants.createdAt,
      lastUsedAt: oauthGrants.lastUsedAt,
    })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(and(eq(oauthGrants.cabinetId, cabinetId), eq(oauthGrants.userId, userId), grantStands(now)))
    .orderBy(desc(oauthGrants.createdAt), desc(oauthGrants.id))
    .all();
}

/** Whether the user has a grant to this client that still stands (one of their connected apps). */
export function hasLiveGrant(orm: Orm, grant: { cabinetId: string; userId: string; clientId: string }, now: number): boolean {
  const row = orm
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(
      and(
        eq(oauthGrants.cabinetId, grant.cabinetId),
        eq(oauthGrants.userId, grant.userId),
        eq(oauthGrants.clientId, grant.clientId),
        grantStands(now),
      ),
    )
    .limit(1)
    .get();
  return row !== undefined;
}

/** Revokes every grant of a user and every token they issued; the number of grants that were live. */
export function revokeGrantsOfUser(orm: Orm, userId: string, at: number): number {
  const ofUser = orm.select({ id: oauthGrants.id }).from(oauthGrants).where(eq(oauthGrants.userId, userId));
  orm
    .update(oauthTokens)
    .set({ revokedAt: at })
    .where(and(inArray(oauthTokens.grantId, ofUser), isNull(oauthTokens.revokedAt)))
    .run();
  return orm
    .update(oauthGrants)
    .set({ revokedAt: at })
    .where(and(eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)))
    .run().changes;
}

/** Deletes everything OAuth holds for a user (tokens, codes, grants, consent requests), before the user is deleted. */
export function deleteGrantsOfUser(orm: Orm, userId: string): void {
  const ofUser = orm.select({ id: oauthGrants.id }).from(oauthGrants).where(eq(oauthGrants.userId, userId));
  orm.delete(oauthTokens).where(inArray(oauthTokens.grantId, ofUser)).run();
  orm.delete(oauthCodes).where(inArray(oauthCodes.grantId, ofUser)).run();
  orm.delete(oauthGrants).where(eq(oauthGrants.userId, userId)).run();
  orm.delete(oauthConsentRequests).where(eq(oauthConsentRequests.userId, userId)).run();
}
