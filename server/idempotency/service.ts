import { hash as digest } from 'node:crypto';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { canonicalJson } from '../platform/http/canonical-json.js';
import * as store from './store.js';
import type { IdempotencyId, IdempotencyRow, StoredResponse } from './store.js';

export type { StoredResponse } from './store.js';

/** How long a key remembers its response. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * An in_progress claim of another process not renewed for this long belongs to a dead process and
 * may be taken over. A live request renews its claim every third of it, however long it runs.
 */
const CLAIM_LOCK_MS = 60_000;

/** What a key may be: the Idempotency-Key header of the API, the idempotency_key argument of MCP tools. */
export const idempotencyKeySchema = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters (a UUID is best)');

/** SHA-256 of the canonical request: the same key with another request is refused. */
export function requestHash(request: unknown): string {
  return digest('sha256', canonicalJson(request), 'hex');
}

/**
 * Rewrites the stored responses of a cabinet that describe one resource (a JSON body with its
 * `id`), whichever caller and endpoint stored them: an erasure takes the personal data out of them,
 * and a replay then answers the rewritten body. Call it inside the transaction of the change.
 */
export function rewriteStoredResponses(
  deps: Pick<Deps, 'db'>,
  cabinetId: string,
  resourceId: string,
  rewrite: (body: Record<string, unknown>) => Record<string, unknown>,
): number {
  const rows = store.findResponsesAbout(deps.db.orm, cabinetId, resourceId);
  for (const { responseBody, ...id } of rows)
    store.setResponseBody(deps.db.orm, id, JSON.stringify(rewrite(JSON.parse(responseBody) as Record<string, unknown>)));
  return rows.length;
}

/** One request that carries an Idempotency-Key. */
export interface IdempotentRequest {
  id: IdempotencyId;
  /** SHA-256 of the canonical request (parameters and body): the same key with another request is refused. */
  requestHash: string;
}

/** What an operation answers: the response for its caller, and the one kept for replays (secrets left out). */
export interface OperationResponse {
  response: StoredResponse;
  stored: StoredResponse;
}

type IdempotentOutcome = { kind: 'fresh'; response: StoredResponse } | { kind: 'replay'; response: StoredResponse };

export interface Idempotency {
  /**
   * Runs a synchronous operation at most once per key. The operation runs inside one IMMEDIATE
   * transaction together with the storing of its response, so the resource it creates and the
   * response that describes it commit together or not at all: a crash between them cannot happen,
   * and a failed operation (it throws) leaves the key unused. Concurrent duplicates wait for
   * SQLite's write lock and then replay.
   */
  once(request: IdempotentRequest, operation: () => OperationResponse): IdempotentOutcome;
  /**
   * The same, in the transaction that this turn's other grouped operations share (see
   * db/commit-group.ts): the API's POST handlers, many at a time under load. Resolves once that
   * transaction has committed; an operation that throws leaves the key unused and the others'
   * work in place.
   */
  onceInGroup(request: IdempotentRequest, operation: () => OperationResponse): Promise<IdempotentOutcome>;
  /**
   * For an operation that must await (a webhook test's delivery): claims the key, renews the claim
   * while the operation runs (so that it is never taken over while in flight), then stores the
   * response, or releases the key if the operation failed.
   */
  onceAsync(request: IdempotentRequest, operation: () => Promise<OperationResponse>): Promise<IdempotentOutcome>;
  /** Deletes expired keys. */
  purge(): number;
}

function replayOf(row: IdempotencyRow): StoredResponse {
  return {
    statusCode: row.statusCode ?? 200,
    body: row.responseBody ?? '',
    headers: JSON.parse(row.responseHeaders ?? '{}') as Record<string, string>,
  };
}

function reused(): ApiError {
  return new ApiError(
    'idempotency_key_reused',
    'This Idempotency-Key was already used with a different request on this endpoint; use a fresh key.',
  );
}

function inProgress(): ApiError {
  return new ApiError(
    'idempotency_conflict',
    'A request with this Idempotency-Key is still in progress; retry the same request in a moment.',
  );
}

/**
 * Idempotency-Key semantics (part 4.1 rules 1-3), scoped to the caller: the same caller, endpoint,
 * key and request replay the stored response; another request with the key is refused; a request
 * still running makes duplicates wait (409). `instanceId` tells this process's claims from others'.
 */
export function createIdempotency(
  deps: Pick<Deps, 'db' | 'clock'>,
  instanceId: string,
  warn: (details: object, message: string) => void = () => undefined,
): Idempotency {
  const { orm } = deps.db;
  /** This process's claims whose operation is running now. */
  const running = new Set<string>();
  const runningKey = (id: IdempotencyId) => JSON.stringify([id.cabinetId, id.caller, id.endpoint, id.key]);

  /**
   * Inside a write transaction: the stored response to replay, an error, or null when the key is
   * free (an expired row, or a claim abandoned by a dead process, is deleted on the way).
   */
  function lookUp(request: IdempotentRequest, now: number): StoredResponse | null {
    const row = store.findKey(orm, request.id);
    if (!row) return null;
    const abandoned =
      row.state === 'in_progress' &&
      (row.owner === instanceId ? !running.has(runningKey(request.id)) : row.lockedAt + CLAIM_LOCK_MS <= now);
    if (row.expiresAt <= now || abandoned) {
      store.deleteKey(orm, request.id);
      return null;
    }
    if (row.requestHash !== request.requestHash) throw reused();
    if (row.state === 'in_progress') throw inProgress();
    return replayOf(row);
  }

  /** Inside a write transaction: the replay, or the operation's response stored with its key. */
  function runOnce(request: IdempotentRequest, operation: () => OperationResponse): IdempotentOutcome {
    const now = deps.clock.now();
    const replay = lookUp(request, now);
    if (replay) return { kind: 'replay', response: replay };
    const { response, stored } = operation();
    store.insertDone(orm, request.id, request.requestHash, stored, now, now + IDEMPOTENCY_TTL_MS);
    return { kind: 'fresh', response };
  }

  return {
    once(request, operation) {
      return deps.db.immediateTransaction(() => runOnce(request, operation));
    },

    onceInGroup(request, operation) {
      return deps.db.commitGroup.run(() => runOnce(request, operation));
    },

    async onceAsync(request, operation) {
      const claimed = deps.db.immediateTransaction((): StoredResponse | null => {
        const now = deps.clock.now();
        const replay = lookUp(request, now);
        if (replay) return replay;
        store.insertClaim(orm, request.id, request.requestHash, instanceId, now, now + IDEMPOTENCY_TTL_MS);
        return null;
      });
      if (claimed) return { kind: 'replay', response: claimed };

      const key = runningKey(request.id);
      running.add(key);
      const heartbeat = setInterval(() => {
        try {
          if (!store.renewClaim(orm, request.id, instanceId, deps.clock.now()))
            warn({ endpoint: request.id.endpoint }, 'an idempotency claim was lost while its request ran');
        } catch (err) {
          // The database was busy (another process held its write lock): the next beat tries again.
          warn({ err, endpoint: request.id.endpoint }, 'renewing an idempotency claim failed');
        }
      }, CLAIM_LOCK_MS / 3);
      heartbeat.unref();
      try {
        const { response, stored } = await operation();
        store.completeClaim(orm, request.id, instanceId, stored);
        return { kind: 'fresh', response };
      } catch (err) {
        store.releaseClaim(orm, request.id, instanceId);
        throw err;
      } finally {
        clearInterval(heartbeat);
        running.delete(key);
      }
    },

    purge() {
      return store.purgeExpired(orm, deps.clock.now());
    },
  };
}
