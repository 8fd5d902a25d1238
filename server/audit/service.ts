import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AuditAction, AuditEntry } from '../../shared/audit.js';
import { toIso, type Deps } from '../deps.js';
import { listenerOf } from '../http/listener.js';
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
  if (request.mcpAccess) return { ...base, kind: 'oauth_client', id: request.mcpAccess.clientId, label: `${request.mcpAccess.clientName} (${request.mcpAccess.userEmail})` };
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

export function recordAudit(deps: Pick<Deps, 'db' | 'clock'>, record: AuditRecord): void {
  store.insertAuditEvent(deps.db.orm, {
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
  });
}

export interface AuditFilters {
  action?: AuditAction;
  userId?: string;
  since?: number;
  until?: number;
  limit: number;
}

export function listAudit(deps: Pick<Deps, 'db'>, cabinetId: string, filters: AuditFilters): AuditEntry[] {
  const rows = store.listAuditEvents(deps.db.orm, { cabinetId, action: filters.action, actorId: filters.userId, since: filters.since, until: filters.until, limit: filters.limit });
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

/** Drops what is older than a year; run at start and daily by the service. */
export function purgeExpiredAudit(deps: Pick<Deps, 'db' | 'clock'>): number {
  return store.deleteAuditEventsBefore(deps.db.orm, deps.clock.now() - AUDIT_RETENTION_MS);
}
