import { and, eq, lt, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { placeholdersFor, preparedQuery } from '../platform/db/prepared-query.js';
import { idempotencyKeys } from './schema.js';

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/** What identifies one use of an Idempotency-Key: the cabinet, who sent it, where, and the key. */
export interface IdempotencyId {
  cabinetId: string;
  /** `key:<api key id>`, or `grant:<oauth grant id>` for an MCP client. */
  caller: string;
  endpoint: string;
  key: string;
}

/** A response as it is replayed. */
export interface StoredResponse {
  statusCode: number;
  body: string;
  headers: Record<string, string>;
}

function where(id: IdempotencyId) {
  return and(
    eq(idempotencyKeys.cabinetId, id.cabinetId),
    eq(idempotencyKeys.caller, id.caller),
    eq(idempotencyKeys.endpoint, id.endpoint),
    eq(idempotencyKeys.key, id.key),
  );
}

const P = sql.placeholder;

/** Looked up and written by every create with a key: prepared once (prepared-query.ts). */
const KEY = preparedQuery((orm) =>
  orm
    .select()
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.cabinetId, P('cabinetId')),
        eq(idempotencyKeys.caller, P('caller')),
        eq(idempotencyKeys.endpoint, P('endpoint')),
        eq(idempotencyKeys.key, P('key')),
      ),
    ),
);

const INSERT_KEY = preparedQuery((orm) => orm.insert(idempotencyKeys).values(placeholdersFor(idempotencyKeys)));

export function findKey(orm: Orm, id: IdempotencyId): IdempotencyRow | undefined {
  return KEY(orm).get({ cabinetId: id.cabinetId, caller: id.caller, endpoint: id.endpoint, key: id.key });
}

export function deleteKey(orm: Orm, id: IdempotencyId): void {
  orm.delete(idempotencyKeys).where(where(id)).run();
}

export function insertDone(
  orm: Orm,
  id: IdempotencyId,
  requestHash: string,
  response: StoredResponse,
  now: number,
  expiresAt: number,
): void {
  // Written out: each property a literal adds after a spread costs V8 a new hidden class.
  const row: IdempotencyRow = {
    cabinetId: id.cabinetId,
    caller: id.caller,
    endpoint: id.endpoint,
    key: id.key,
    requestHash,
    state: 'done',
    statusCode: response.statusCode,
    responseBody: response.body,
    responseHeaders: JSON.stringify(response.headers),
    owner: null,
    lockedAt: now,
    expiresAt,
  };
  INSERT_KEY(orm).run(row);
}

export function insertClaim(orm: Orm, id: IdempotencyId, requestHash: string, owner: string, now: number, expiresAt: number): void {
  orm
    .insert(idempotencyKeys)
    .values({
      cabinetId: id.cabinetId,
      caller: id.caller,
      endpoint: id.endpoint,
      key: id.key,
      requestHash,
      state: 'in_progress',
      statusCode: null,
      responseBody: null,
      responseHeaders: null,
      owner,
      lockedAt: now,
      expiresAt,
    })
    .run();
}

/** Keeps a running claim alive; false when it is no longer this owner's (taken over, or released). */
export function renewClaim(orm: Orm, id: IdempotencyId, owner: string, now: number): boolean {
  return (
    orm
      .update(idempotencyKeys)
      .set({ lockedAt: now })
      .where(and(where(id), eq(idempotencyKeys.state, 'in_progress'), eq(idempotencyKeys.owner, owner)))
      .run().changes > 0
  );
}

export function completeClaim(orm: Orm, id: IdempotencyId, owner: string, response: StoredResponse): void {
  orm
    .update(idempotencyKeys)
    .set({
      state: 'done',
      statusCode: response.statusCode,
      responseBody: response.body,
      responseHeaders: JSON.stringify(response.headers),
      owner: null,
    })
    .where(and(where(id), eq(idempotencyKeys.state, 'in_progress'), eq(idempotencyKeys.owner, owner)))
    .run();
}

/** Forgets a claim whose request failed, so that the same key can be retried. */
export function releaseClaim(orm: Orm, id: IdempotencyId, owner: string): void {
  orm
    .delete(idempotencyKeys)
    .where(and(where(id), eq(idempotencyKeys.state, 'in_progress'), eq(idempotencyKeys.owner, owner)))
    .run();
}

export function purgeExpired(orm: Orm, now: number): number {
  return orm.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now)).run().changes;
}

/** A cabinet's stored responses whose body is one resource (its JSON has this `id`). */
export function findResponsesAbout(orm: Orm, cabinetId: string, resourceId: string): (IdempotencyId & { responseBody: string })[] {
  const rows = orm
    .select({
      cabinetId: idempotencyKeys.cabinetId,
      caller: idempotencyKeys.caller,
      endpoint: idempotencyKeys.endpoint,
      key: idempotencyKeys.key,
      responseBody: idempotencyKeys.responseBody,
    })
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.cabinetId, cabinetId),
        eq(idempotencyKeys.state, 'done'),
        // json_extract throws on text that is not JSON: only bodies that are JSON are looked into.
        sql`CASE WHEN json_valid(${idempotencyKeys.responseBody}) THEN json_extract(${idempotencyKeys.responseBody}, '$.id') END = ${resourceId}`,
      ),
    )
    .all();
  return rows.flatMap(({ responseBody, ...id }) => (responseBody === null ? [] : [{ ...id, responseBody }]));
}

export function setResponseBody(orm: Orm, id: IdempotencyId, body: string): void {
  orm.update(idempotencyKeys).set({ responseBody: body }).where(where(id)).run();
}
