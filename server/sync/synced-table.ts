import { and, eq, getTableColumns, gt, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { z } from 'zod';
import type { SyncedKind, SyncOp } from '../../shared/sync-protocol.js';
import type { SyncConflict } from '../../shared/console-sync.js';
import { changeRuleBroken } from '../../shared/sync-rules.js';
import type { Deps } from '../deps.js';
import type { Orm, Database } from '../platform/db/open.js';
import { placeholdersFor, preparedQuery, setPlaceholders, type PlaceholderValues } from '../platform/db/prepared-query.js';
import { recordChange, type ChangeFields, type ChangeKind } from './capture.js';
import { storedId } from './stored-values.js';
import { ownDevices } from './store.js';

/** What a pulled change may need besides its fields: the PDFs it names, fetched from the hub first. */
export interface ApplyContext {
  /** A PDF fetched for this page (staged), by SHA-256. */
  blob(sha256: string): Buffer | undefined;
  now: number;
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges' | 'keys'>;
  /** The change being written: which device sent it, and its place on the hub (for the audit log). */
  origin?: { deviceId: string; seq: number };
}

/** A pulled change as a kind's rules see it. */
interface PulledRecordChange {
  op: SyncOp;
  recordId: string;
  fields: ChangeFields;
  /** The device that made it. */
  deviceId: string;
}

/** Why a pulled change is set aside rather than applied: a stable code and the reason in words. */
export interface Refusal {
  reason: SyncConflict['reason'];
  message: string;
  /** With not_understood: the fields this version does not know; none when it is the kind itself. */
  notUnderstood?: string[];
}

/** The first problems zod found, as one line. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || 'fields'}: ${issue.message}`)
    .join('; ');
}

/**
 * One synced kind of record, as its module lets the sync read and write it. The module owns the
 * table; the sync engine only goes through this.
 */
export interface SyncedRecords {
  kind: SyncedKind;
  /**
   * Why this install must not apply a pulled change (its fields fail the checks of a local write,
   * the kind is never erased, the id is another cabinet's record here…), or null: checked before
   * anything is written, so that what another device sends can never corrupt this install.
   */
  refusal(orm: Orm, cabinetId: string, change: PulledRecordChange): Refusal | null;
  /** The fields of a change this version has no column for (a newer install's): kept aside, never clocked here. */
  unknownFields(fields: ChangeFields): string[];
  /** Every record of the cabinet, as the fields of an upsert: what connecting uploads. */
  snapshot(db: Database, cabinetId: string): Iterable<{ recordId: string; fields: ChangeFields }>;
  /** Writes pulled fields that refusal() let through; throws on a constraint the checks could not see (set aside by the caller). */
  write(orm: Orm, cabinetId: string, recordId: string, fields: ChangeFields, context: ApplyContext): boolean;
  /**
   * A pulled change this install drops unseen, neither applied nor set aside: what it would write
   * here is data an erasure removed (an event about an erased client), or nothing at all (an edit or
   * erasure of an event this install never held, which writing would deliver, late, to its webhooks).
   */
  skips?(context: ApplyContext, cabinetId: string, change: PulledRecordChange): boolean;
  /**
   * Before a pulled erasure is written: takes the erased data out of the records of other kinds that
   * copied it (a client's quotes, jobs and opportunities), queueing those edits in turn.
   */
  beforeErase?(context: ApplyContext, cabinetId: string, recordId: string): void;
  /**
   * After a pulled erasure: clears the copies of the erased data this install keeps elsewhere (a
   * client's earlier events), queueing those as erasures in turn, for copies only this install made.
   */
  afterErase?(context: ApplyContext, cabinetId: string, recordId: string): void;
  /** PDFs (SHA-256) a change names: uploaded before it is pushed, fetched before it is applied. */
  blobsOf?(fields: ChangeFields): string[];
  /** A PDF this install holds, for the upload. */
  readBlob?(orm: Orm, cabinetId: string, sha256: string): Buffer | undefined;
  /** Whether this install already holds a PDF, so that a pull fetches it once. */
  hasBlob?(orm: Orm, cabinetId: string, sha256: string): boolean;
}

type TableWithId = SQLiteTable & { id: SQLiteColumn; cabinetId: SQLiteColumn };

const P = sql.placeholder;

/** The rows a snapshot reads at a time. */
const SNAPSHOT_PAGE = 1000;

/** Each property as the placeholder of its name: drizzle binds the value given through the column's encoder. */
function placeholders(keys: readonly string[]): Record<string, Placeholder> {
  return Object.fromEntries(keys.map((key) => [key, P(key)]));
}

type CaptureDeps = Pick<Deps, 'db' | 'clock' | 'syncChanges'>;

/**
 * A synced table's writes on this install: each writes the row and queues what it changed for the
 * hub, in the caller's transaction, so that no write of a synced column can forget the other
 * installs. Pulled changes go through SyncedRecords.write, which queues nothing.
 */
export interface SyncedTable<T extends TableWithId> extends SyncedRecords {
  /** A new record, queued whole (unless it stays here: SyncedTableOptions.staysHere). */
  insert(deps: CaptureDeps, row: T['$inferInsert']): void;
  /**
   * Sets some columns of a record (an undefined value leaves its column alone) and queues those
   * that sync. The record as written; undefined, with nothing written, when the cabinet has no
   * such record or it can no longer be edited (SyncedTableOptions.editableWhile).
   */
  update(deps: CaptureDeps, cabinetId: string, recordId: string, changes: Partial<T['$inferSelect']>): T['$inferSelect'] | undefined;
  /** An erasure: sets the columns as update() does, then queues the whole record as its tombstone. */
  erase(deps: CaptureDeps, cabinetId: string, recordId: string, changes: Partial<T['$inferSelect']>): T['$inferSelect'] | undefined;
  /**
   * Queues a change of some columns of a record written by the caller's own statement; only for a
   * kind whose changes travel at moments of its own choosing (a job, at each status).
   */
  capture(deps: CaptureDeps, cabinetId: string, recordId: string, row: Partial<T['$inferSelect']>, how?: ChangeKind): void;
}

export interface SyncedTableOptions<T extends TableWithId> {
  /** Columns that mean something on this install only (a lease, a local file, a webhook subscription). */
  local?: readonly (keyof T['$inferSelect'])[];
  /** The synced columns by SQL name, as SQLite stores them: what a pulled creation must match (an edit, some of them). */
  fields: z.ZodObject;
  /** The fields an erasure carries (the tombstone's), when not the whole row (the protocol says which kinds are erased: changeRuleBroken). */
  erasure?: z.ZodObject;
  /**
   * The kind's own rule on a pulled change, after the fields passed (jobs: never one this install
   * runs). `madeHere`: the change was made by one of this install's devices (it gets its own changes
   * back after it was restored from a backup).
   */
  accepts?: (orm: Orm, cabinetId: string, change: PulledRecordChange & { held: boolean; madeHere: () => boolean }) => Refusal | null;
  /** A condition on the row while it may be edited here (a client until its erasure): update() and erase() leave others alone. */
  editableWhile?: SQL;
  /** A record that concerns this install only (a webhook's test event): insert() does not queue it. */
  staysHere?: (row: T['$inferInsert']) => boolean;
  /**
   * How a creation is queued: as a creation, without field clocks (a record whose id only this
   * install can make), or as an edit, with them (an id two installs can both make: a quote's
   * contract, signed on two installs offline, where the later signing must win field by field).
   */
  createdAs?: 'create' | 'update';
}

/**
 * The sync of a table whose rows have an `id` and a `cabinet_id`: its fields are the columns by SQL
 * name (values as SQLite stores them), minus the cabinet (the hub knows it) and the `local` columns.
 */
export function syncedTable<T extends TableWithId>(kind: SyncedKind, table: T, options: SyncedTableOptions<T>): SyncedTable<T> {
  const local = new Set<string>(['cabinetId', 'id', ...(options.local ?? []).map(String)]);
  const columns = Object.entries(getTableColumns(table) as Record<string, SQLiteColumn>).filter(([key]) => !local.has(key));
  const columnOfName = new Map(columns.map(([, column]) => [column.name, column]));
  const ofRecord = and(eq(table.cabinetId, P('cabinetId')), eq(table.id, P('id')));
  // The table's statements, prepared once per connection; a write's, once per set of columns it names.
  const HOLDER = preparedQuery((orm) =>
    orm
      .select({ cabinet: table.cabinetId })
      .from(table)
      .where(eq(table.id, P('id'))),
  );
  const HELD = preparedQuery((orm) =>
    orm
      .select({ held: sql`1` })
      .from(table)
      .where(ofRecord),
  );
  const UPDATE = preparedQuery((orm, ...keys: string[]) => orm.update(table).set(placeholders(keys)).where(ofRecord));
  const INSERT = preparedQuery((orm, ...keys: string[]) =>
    orm.insert(table).values(placeholders([...keys, 'id', 'cabinetId']) as T['$inferInsert']),
  );
  // By pages of rowid: the caller writes between two reads, which an open iterator forbids.
  // NOT INDEXED: through the cabinet's index, SQLite would read and sort every remaining row of
  // the cabinet for each page; the rowid range is the walk. The fields are read as SQLite stores them.
  const PAGE = preparedQuery((orm) =>
    orm
      .select({
        rowid: sql<number>`rowid`,
        id: sql<string>`${table.id}`,
        ...Object.fromEntries(columns.map(([, column]) => [column.name, sql`${column}`])),
      })
      .from(sql`${table} NOT INDEXED`)
      .where(and(eq(table.cabinetId, P('cabinetId')), gt(sql`rowid`, P('after'))))
      .orderBy(sql`rowid`)
      .limit(SNAPSHOT_PAGE),
  );
  const editable = options.fields.partial();
  const INSERT_LOCAL = preparedQuery((orm) => orm.insert(table).values(placeholdersFor(table) as T['$inferInsert']));
  const UPDATE_LOCAL = preparedQuery((orm, ...keys: string[]) =>
    orm.update(table).set(setPlaceholders(table, keys)).where(and(ofRecord, options.editableWhile)).returning(),
  );
  const allColumns = Object.keys(getTableColumns(table));

  /** The record as an update of these columns leaves it; columns named in the table's order, so that one statement serves each set. */
  const updateRow = (orm: Orm, cabinetId: string, recordId: string, changes: Record<string, unknown>): T['$inferSelect'] | undefined => {
    const keys = allColumns.filter((key) => changes[key] !== undefined && key !== 'id' && key !== 'cabinetId');
    if (keys.length === 0) throw new Error(`An update of a ${kind} needs at least one column to set.`);
    const rows = UPDATE_LOCAL(orm, ...keys).all({ ...changes, cabinetId, id: recordId }) as T['$inferSelect'][];
    return rows[0];
  };

  const toFields = (row: Record<string, unknown>): ChangeFields => {
    const fields: ChangeFields = {};
    for (const [key, column] of columns) if (key in row && row[key] !== undefined) fields[column.name] = row[key];
    return fields;
  };

  /** Queues the synced columns among these (none: nothing is queued); made only when the cabinet syncs. */
  const queue = (deps: CaptureDeps, cabinetId: string, recordId: string, row: Record<string, unknown>, how?: ChangeKind) =>
    recordChange(deps, cabinetId, { kind, recordId, how, fields: () => toFields(row) });

  /** The fields this version has columns for: a newer install's extra ones are dropped, as write() does. */
  const known = (fields: ChangeFields): ChangeFields =>
    Object.fromEntries(Object.entries(fields).filter(([name]) => columnOfName.has(name)));

  return {
    kind,
    unknownFields: (fields) => Object.keys(fields).filter((name) => !columnOfName.has(name)),
    refusal(orm, cabinetId, change) {
      if (!storedId.safeParse(change.recordId).success)
        return { reason: 'invalid_fields', message: `record_id ${JSON.stringify(change.recordId.slice(0, 80))} is not a record id` };
      const broken = changeRuleBroken({ kind, op: change.op, record_id: change.recordId, fields: change.fields });
      if (broken) return { reason: 'operation_refused', message: broken };
      const holder = HOLDER(orm).get({ id: change.recordId });
      if (holder && holder.cabinet !== cabinetId)
        return { reason: 'record_clash', message: `another cabinet of this install holds a ${kind} with this id` };
      const fields = known(change.fields);
      // An upsert the hub emptied (the record was erased since): nothing to write, nothing to check.
      if (Object.keys(fields).length === 0 && change.op === 'upsert') return null;
      const schema = change.op === 'erase' ? (options.erasure ?? options.fields) : holder ? editable : options.fields;
      const checked = schema.safeParse(fields);
      if (!checked.success)
        return {
          reason: 'invalid_fields',
          message: `${kind} ${change.op === 'erase' ? 'erasure' : holder ? 'edit' : 'creation'} refused: ${describeIssues(checked.error)}`,
        };
      return (
        options.accepts?.(orm, cabinetId, {
          ...change,
          held: holder !== undefined,
          madeHere: () => ownDevices(orm, cabinetId).has(change.deviceId),
        }) ?? null
      );
    },
    insert(deps, row) {
      INSERT_LOCAL(deps.db.orm).run(row);
      if (options.staysHere?.(row)) return;
      const record = row as Record<string, unknown>;
      queue(deps, String(record.cabinetId), String(record.id), record, options.createdAs ?? 'create');
    },
    update(deps, cabinetId, recordId, changes) {
      const row = updateRow(deps.db.orm, cabinetId, recordId, changes);
      if (row) queue(deps, cabinetId, recordId, changes);
      return row;
    },
    erase(deps, cabinetId, recordId, changes) {
      const row = updateRow(deps.db.orm, cabinetId, recordId, changes);
      if (row) queue(deps, cabinetId, recordId, row, 'erase');
      return row;
    },
    capture(deps, cabinetId, recordId, row, how) {
      queue(deps, cabinetId, recordId, row, how);
    },
    *snapshot(db, cabinetId) {
      for (let after = 0; ;) {
        const rows = PAGE(db.orm).all({ cabinetId, after });
        for (const { rowid, id, ...fields } of rows) {
          after = rowid;
          yield { recordId: String(id), fields };
        }
        if (rows.length < SNAPSHOT_PAGE) return;
      }
    },
    write(orm, cabinetId, recordId, fields) {
      const keys: string[] = [];
      const values: PlaceholderValues = { cabinetId, id: recordId };
      // In the table's order, so that fields sent in another order use the same statement; a field
      // this version does not know (written by a newer install) has no column here.
      for (const [key, column] of columns) {
        if (!Object.hasOwn(fields, column.name)) continue;
        keys.push(key);
        // Bound through the column's encoder (a boolean column stores 0 or 1); null stays null.
        values[key] = fields[column.name];
      }
      if (keys.length === 0) return true;
      if (HELD(orm).get(values) !== undefined) UPDATE(orm, ...keys).run(values);
      else INSERT(orm, ...keys).run(values);
      return true;
    },
  };
}
