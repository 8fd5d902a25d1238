import { createHash } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { canonicalJson } from '../platform/http/canonical-json.js';
import type { TransactionSql } from 'postgres';
import type { HubDeps } from './deps.js';

/**
 * The hub's audit log (hub_audit_events): who paired which device into which cabinet (and who was
 * refused), which device left or was revoked, what the operator did. Each entry is sealed to the
 * one before it, so that an entry changed or removed in the database shows in `courtier hub audit
 * verify`; the hub has no secret of its own, so the seal is a plain SHA-256 chain: it shows edits,
 * not a rewrite of the whole log from some entry on, against which an operator notes the newest seal.
 */

type HubAuditAction =
  | 'hub.device_paired'
  | 'hub.pairing_refused'
  | 'hub.device_left'
  | 'hub.device_revoked'
  | 'hub.invite_created'
  | 'hub.protocol_reset'
  | 'hub.credits_granted'
  | 'hub.restored'
  | 'hub.compacted';

export interface HubAuditActor {
  kind: 'operator' | 'device' | 'anonymous' | 'system';
  id: string | null;
  label: string | null;
  address: string | null;
}

/** Whoever runs a `courtier hub` command: the machine's user, as the operator's terminal is theirs. */
export function operatorActor(): HubAuditActor {
  return { kind: 'operator', id: null, label: `${userInfo().username}@${hostname()}`, address: null };
}

export interface HubAuditEntry {
  seq: number;
  at: string;
  action: HubAuditAction;
  result: 'success' | 'failure';
  actor: { kind: HubAuditActor['kind']; id: string | null; label: string | null };
  cabinet_id: string | null;
  address: string | null;
  target: string | null;
  details: Record<string, unknown>;
}

/** Serialises every writer of the chain, on every hub process, until its transaction commits. */
const AUDIT_LOCK = 7_351_004;

interface Row {
  seq: string;
  /** The driver of the hub's shared client gives timestamps as text. */
  at: Date | string;
  action: string;
  result: string;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string | null;
  cabinet_id: string | null;
  address: string | null;
  target: string | null;
  details: Record<string, unknown>;
  seal: string;
}

const isoOf = (at: Date | string) => new Date(at).toISOString();

function sealOf(previous: string, row: Omit<Row, 'seq' | 'seal'>): string {
  const fields = [
    isoOf(row.at),
    row.action,
    row.result,
    row.actor_kind,
    row.actor_id,
    row.actor_label,
    row.cabinet_id,
    row.address,
    row.target,
    canonicalJson(row.details),
  ];
  return createHash('sha256').update(previous).update('\n').update(JSON.stringify(fields)).digest('hex');
}

/** What an audit entry says; the time and the seal are the hub's. */
type HubAuditRecord = {
  action: HubAuditAction;
  result?: 'success' | 'failure';
  actor: HubAuditActor;
  cabinetId?: string | null;
  target?: string | null;
  details?: Record<string, unknown>;
};

export async function recordHubAudit(deps: Pick<HubDeps, 'sql' | 'clock'>, entry: HubAuditRecord): Promise<void> {
  await deps.sql.begin((tx) => recordHubAuditIn(tx, deps.clock.now(), entry));
}

/** The entry, sealed, in the caller's transaction: it commits with what it records, or not at all. */
export async function recordHubAuditIn(tx: TransactionSql, now: number, entry: HubAuditRecord): Promise<void> {
  const row = {
    at: new Date(now),
    action: entry.action,
    result: entry.result ?? 'success',
    actor_kind: entry.actor.kind,
    actor_id: entry.actor.id,
    actor_label: entry.actor.label,
    cabinet_id: entry.cabinetId ?? null,
    address: entry.actor.address,
    target: entry.target ?? null,
    details: entry.details ?? {},
  };
  await tx`SELECT pg_advisory_xact_lock(${AUDIT_LOCK})`;
  const [last] = await tx<{ seal: string }[]>`SELECT seal FROM hub_audit_events ORDER BY seq DESC LIMIT 1`;
  const seal = sealOf(last?.seal ?? '', row);
  await tx`
    INSERT INTO hub_audit_events (at, action, result, actor_kind, actor_id, actor_label, cabinet_id, address, target, details, seal)
    VALUES (${row.at.toISOString()}::timestamptz, ${row.action}, ${row.result}, ${row.actor_kind}, ${row.actor_id}, ${row.actor_label}, ${row.cabinet_id}, ${row.address}, ${row.target}, ${JSON.stringify(row.details)}::jsonb, ${seal})`;
}

export async function listHubAudit(deps: Pick<HubDeps, 'sql'>, filters: { cabinetId?: string; limit: number }): Promise<HubAuditEntry[]> {
  const rows = await deps.sql<Row[]>`
    SELECT * FROM hub_audit_events
    WHERE ${filters.cabinetId === undefined ? deps.sql`true` : deps.sql`cabinet_id = ${filters.cabinetId}`}
    ORDER BY seq DESC LIMIT ${filters.limit}`;
  return rows.map((row) => ({
    seq: Number(row.seq),
    at: isoOf(row.at),
    action: row.action as HubAuditAction,
    result: row.result as 'success' | 'failure',
    actor: { kind: row.actor_kind as HubAuditActor['kind'], id: row.actor_id, label: row.actor_label },
    cabinet_id: row.cabinet_id,
    address: row.address,
    target: row.target,
    details: row.details,
  }));
}

export interface HubAuditVerification {
  ok: boolean;
  checked: number;
  head: string | null;
  broken: { seq: number; at: string; action: string } | null;
}

/** Walks the chain from the first entry: the first whose seal does not follow the one before it is named. */
export async function verifyHubAudit(deps: Pick<HubDeps, 'sql'>): Promise<HubAuditVerification> {
  let previous = '';
  let checked = 0;
  let after = 0;
  for (;;) {
    const rows = await deps.sql<Row[]>`SELECT * FROM hub_audit_events WHERE seq > ${after} ORDER BY seq LIMIT 1000`;
    for (const { seq, seal, ...row } of rows) {
      if (seal !== sealOf(previous, row)) {
        return { ok: false, checked, head: null, broken: { seq: Number(seq), at: isoOf(row.at), action: row.action } };
      }
      previous = seal;
      after = Number(seq);
      checked += 1;
    }
    if (rows.length < 1000) return { ok: true, checked, head: previous || null, broken: null };
  }
}
