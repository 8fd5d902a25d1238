import { createHmac, randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AuditAction, AuditEntry } from '../../shared/audit.js';
import type { Deps } from '../deps.js';
import { toIso, toIsoOrNull } from '../platform/iso-time.js';
import { listenerOf } from '../platform/http/listener.js';
import * as store from './store.js';

const AUDIT_RETENTION_MS = 366 * 86_400_000;

export interface AuditActor {
  kind: AuditEntry['actor']['kind'];
  id: string | null;
  label: string | null;
  address: string | null;
  listener: AuditEntry['listener'];
}

/** A command run at the machine (`courtier …`): the person is whoever holds the data dir. */
export const CLI_ACTOR: AuditActor = { kind: 'cli', id: null, label: 'courtier CLI', address: null, listener: 'cli' };
/** The service itself (a certificate renewed on an address change). */
export const SYSTEM_ACTOR: AuditActor = { kind: 'system', id: null, label: 'Courtier', address: null, listener: 'internal' };

/** Who made a request: its console user, API key or OAuth client once authenticated, else its address alone. */
export function requestActor(request: FastifyRequest): AuditActor {
  const base = { address: request.ip, listener: listenerOf(request) };
  if (request.consoleUser) return { ...base, kind: 'user', id: request.consoleUser.userId, label: request.consoleUser.email };
  if (request.mcpAccess)
    return {
      ...base,
      kind: 'oauth_client',
      id: request.mcpAccess.clientId,
      label: `${request.mcpAccess.clientName} (${request.mcpAccess.userEmail})`,
    };
  if (request.apiKey) return { ...base, kind: 'api_key', id: request.apiKey.keyId, label: null };
  return { ...base, kind: 'anonymous', id: null, label: null };
}

export interface AuditRecord {
  /** null: install-wide (LAN mode, certificates). */
  cabinetId: string | null;
  action: AuditAction;
  result?: 'success' | 'failure';
  actor: AuditActor;
  target?: string | null;
  /** Facts that are never secret: ids, names, hosts, counts. */
  details?: Record<string, unknown>;
}

type AuditDeps = Pick<Deps, 'db' | 'clock' | 'keys'>;

/** A row's seal: HMAC of the previous row's seal and every field of this one, in a fixed order. */
function sealOf(key: Buffer, previous: string, row: Omit<store.AuditRow, 'chain'>): string {
  const fields = [
    row.id,
    row.cabinetId,
    row.at,
    row.action,
    row.result,
    row.actorKind,
    row.actorId,
    row.actorLabel,
    row.address,
    row.listener,
    row.target,
    row.details,
  ];
  return createHmac('sha256', key).update(previous).update('\n').update(JSON.stringify(fields)).digest('hex');
}

/** The seal of where the chain starts: moving it to hide rows removed from the start breaks it. */
function startSealOf(key: Buffer, start: Omit<store.ChainStart, 'seal'>): string {
  return createHmac('sha256', key)
    .update('start\n')
    .update(JSON.stringify([start.chain, start.purged, start.purgedAt]))
    .digest('hex');
}

/**
 * Where the chain starts, made on first use: the rows written before the log was chained are sealed
 * then, once and in order. From then on a row without a seal is a broken chain, never sealed again.
 */
function chainStart(deps: AuditDeps): store.ChainStart {
  const found = store.findChainStart(deps.db.orm);
  if (found) return found;
  let previous = '';
  for (let after = 0; ;) {
    const rows = store.auditEventsAfter(deps.db.orm, after, 1000);
    for (const { rowid, chain, ...row } of rows) {
      previous = chain === '' ? sealOf(deps.keys.auditChain, previous, row) : chain;
      if (chain === '') store.setAuditChain(deps.db.orm, rowid, previous);
      after = rowid;
    }
    if (rows.length < 1000) break;
  }
  const start = { chain: '', purged: 0, purgedAt: null };
  const sealed = { ...start, seal: startSealOf(deps.keys.auditChain, start) };
  store.saveChainStart(deps.db.orm, sealed);
  return sealed;
}

/**
 * Appends an entry, sealed to the one before it: in one IMMEDIATE transaction (a savepoint of the
 * caller's), so that the service and the CLI, writing the same file, chain one after the other.
 */
export function recordAudit(deps: AuditDeps, record: AuditRecord): void {
  deps.db.immediateTransaction(() => {
    const start = chainStart(deps);
    const previous = store.newestAuditEvent(deps.db.orm)?.chain ?? start.chain;
    const row = {
      id: randomUUID(),
      cabinetId: record.cabinetId,
      at: deps.clock.now(),
      action: record.action,
      result: record.result ?? 'success',
      actorKind: record.actor.kind,
      actorId: record.actor.id,
      actorLabel: record.actor.label,
      address: record.actor.address,
      listener: record.actor.listener,
      target: record.target ?? null,
      details: JSON.stringify(record.details ?? {}),
    } satisfies Omit<store.AuditRow, 'chain'>;
    store.insertAuditEvent(deps.db.orm, { ...row, chain: sealOf(deps.keys.auditChain, previous, row) });
  });
}

export interface AuditVerification {
  ok: boolean;
  /** Rows checked, oldest first. */
  checked: number;
  /** The newest row's seal: noted elsewhere, it shows later that the log was not rewritten whole. */
  head: string | null;
  /**
   * The first row whose seal does not match (changed, unsealed, or written out of turn), the row
   * after one removed, or `start` when where the chain starts was moved (rows removed from the start).
   */
  broken: { id: string; at: string | null; action: string } | null;
  /** Rows removed by the retention purge so far. */
  purged: number;
}

/** Walks the chain from its start (or the last purge) to the newest row. */
export function verifyAudit(deps: AuditDeps): AuditVerification {
  const start = deps.db.immediateTransaction(() => chainStart(deps));
  const { seal, ...unsealed } = start;
  if (seal !== startSealOf(deps.keys.auditChain, unsealed)) {
    return {
      ok: false,
      checked: 0,
      head: null,
      broken: { id: 'start', at: toIsoOrNull(start.purgedAt), action: 'retention purge' },
      purged: start.purged,
    };
  }
  let previous = start.chain;
  let checked = 0;
  for (let after = 0; ;) {
    const rows = store.auditEventsAfter(deps.db.orm, after, 1000);
    for (const { rowid, chain, ...row } of rows) {
      if (chain !== sealOf(deps.keys.auditChain, previous, row)) {
        return { ok: false, checked, head: null, broken: { id: row.id, at: toIso(row.at), action: row.action }, purged: start.purged };
      }
      previous = chain;
      after = rowid;
      checked += 1;
    }
    if (rows.length < 1000) return { ok: true, checked, head: previous || null, broken: null, purged: start.purged };
  }
}

export interface AuditFilters {
  action?: AuditAction;
  userId?: string;
  since?: number;
  until?: number;
  limit: number;
}

export function listAudit(deps: Pick<Deps, 'db'>, cabinetId: string, filters: AuditFilters): AuditEntry[] {
  const rows = store.listAuditEvents(deps.db.orm, {
    cabinetId,
    action: filters.action,
    actorId: filters.userId,
    since: filters.since,
    until: filters.until,
    limit: filters.limit,
  });
  return rows.map((row) => ({
    id: row.id,
    at: toIso(row.at),
    action: row.action as AuditAction,
    result: row.result,
    actor: { kind: row.actorKind, id: row.actorId, label: row.actorLabel },
    address: row.address,
    listener: row.listener,
    target: row.target,
    details: JSON.parse(row.details) as Record<string, unknown>,
    cabinet_scoped: row.cabinetId !== null,
  }));
}

/** A gap between two entries counts for at most this much of their age (see firstRetainedAuditRowid). */
const MAX_COUNTED_GAP_MS = 7 * 86_400_000;

/**
 * Drops what is older than a year, counted along the log itself rather than by the clock (a clock
 * set years ahead, and an entry written with it, would otherwise empty the log): run at start and
 * daily by the service. The chain goes on from the last row removed.
 */
export function purgeExpiredAudit(deps: AuditDeps): number {
  return deps.db.immediateTransaction(() => {
    const start = chainStart(deps);
    const firstKept = store.firstRetainedAuditRowid(deps.db.orm, AUDIT_RETENTION_MS, MAX_COUNTED_GAP_MS);
    if (firstKept === null) return 0;
    const removed = store.deleteAuditPrefix(deps.db.orm, firstKept);
    if (!removed) return 0;
    const next = { chain: removed.lastChain, purged: start.purged + removed.removed, purgedAt: deps.clock.now() };
    store.saveChainStart(deps.db.orm, { ...next, seal: startSealOf(deps.keys.auditChain, next) });
    return removed.removed;
  });
}
