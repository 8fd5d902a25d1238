import { and, eq, lt } from 'drizzle-orm';
import type { Database } from '../db/open.js';
import { idempotencyKeys } from './schema.js';

export interface IdempotencyId {
  cabinetId: string;
  endpoint: string;
  key: string;
}

export type BeginOutcome =
  | { kind: 'started' }
  | { kind: 'in_progress' }
  | { kind: 'reused' }
  | { kind: 'replay'; statusCode: number; body: string; headers: Record<string, string> };

function where(id: IdempotencyId) {
  return and(eq(idempotencyKeys.cabinetId, id.cabinetId), eq(idempotencyKeys.endpoint, id.endpoint), eq(idempotencyKeys.key, id.key));
}

/**
 * Claims a key, or says why not, in one IMMEDIATE transaction: two concurrent requests with one
 * key can never both start. An expired row, or a claim abandoned longer than lockMs (its process
 * died), is taken over.
 */
export function beginRequest(
  db: Database,
  id: IdempotencyId,
  requestHash: string,
  now: number,
  options: { ttlMs: number; lockMs: number },
): BeginOutcome {
  return db.sqlite
    .transaction((): BeginOutcome => {
      const row = db.orm.select().from(idempotencyKeys).where(where(id)).get();
      const stale = row && (row.expiresAt <= now || (row.state === 'in_progress' && row.lockedAt + options.lockMs <= now));
      if (row && !stale) {
        if (row.requestHash !== requestHash) return { kind: 'reused' };
        if (row.state === 'in_progress') return { kind: 'in_progress' };
        return {
          kind: 'replay',
          statusCode: row.statusCode ?? 200,
          body: row.responseBody ?? '',
          headers: JSON.parse(row.responseHeaders ?? '{}') as Record<string, string>,
        };
      }
      if (row) db.orm.delete(idempotencyKeys).where(where(id)).run();
      db.orm
        .insert(idempotencyKeys)
        .values({ ...id, requestHash, state: 'in_progress', statusCode: null, responseBody: null, responseHeaders: null, lockedAt: now, expiresAt: now + options.ttlMs })
        .run();
      return { kind: 'started' };
    })
    .immediate();
}

export function completeRequest(db: Database, id: IdempotencyId, response: { statusCode: number; body: string; headers: Record<string, string> }): void {
  db.orm
    .update(idempotencyKeys)
    .set({ state: 'done', statusCode: response.statusCode, responseBody: response.body, responseHeaders: JSON.stringify(response.headers) })
    .where(and(where(id), eq(idempotencyKeys.state, 'in_progress')))
    .run();
}

/** Forgets a claim whose request failed, so that the same key can be retried (e.g. after a top-up). */
export function releaseRequest(db: Database, id: IdempotencyId): void {
  db.orm
    .delete(idempotencyKeys)
    .where(and(where(id), eq(idempotencyKeys.state, 'in_progress')))
    .run();
}

export function purgeExpired(db: Database, now: number): number {
  return db.orm.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now)).run().changes;
}
