import { and, eq, getTableColumns, getTableName } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { SyncedKind } from '../../shared/sync-protocol.js';
import type { Deps } from '../deps.js';
import type { Orm, Database } from '../db/open.js';
import { recordChange, type ChangeFields } from './capture.js';

/** What a pulled change may need besides its fields: the PDFs it names, fetched from the hub first. */
export interface ApplyContext {
  blobs: ReadonlyMap<string, Buffer>;
  now: number;
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>;
}

/**
 * One synced kind of record, as its module lets the sync read and write it. The module owns the
 * table; the sync engine only goes through this.
 */
export interface SyncedRecords {
  kind: SyncedKind;
  /** Every record of the cabinet, as the fields of an upsert: what connecting uploads. */
  snapshot(db: Database, cabinetId: string): Iterable<{ recordId: string; fields: ChangeFields }>;
  /** Writes pulled fields; false when the record is not here and the fields cannot create it. */
  write(orm: Orm, cabinetId: string, recordId: string, fields: ChangeFields, context: ApplyContext): boolean;
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

export interface SyncedTable<T extends TableWithId> extends SyncedRecords {
  /** Queues a change of some columns of a record (all of them on creation); inside the change's transaction. */
  capture(deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>, cabinetId: string, recordId: string, row: Partial<T['$inferSelect']>, op?: 'upsert' | 'erase'): void;
}

/**
 * The sync of a table whose rows have an `id` and a `cabinet_id`: its fields are the columns by SQL
 * name (values as SQLite stores them), minus the cabinet (the hub knows it) and the `local` columns,
 * which mean something on this install only (a lease, a local file, a webhook subscription).
 */
export function syncedTable<T extends TableWithId>(kind: SyncedKind, table: T, options: { local?: readonly (keyof T['$inferSelect'])[] } = {}): SyncedTable<T> {
  const local = new Set<string>(['cabinetId', 'id', ...(options.local ?? []).map(String)]);
  const columns = Object.entries(getTableColumns(table) as Record<string, SQLiteColumn>).filter(([key]) => !local.has(key));
  const keyOfName = new Map(columns.map(([key, column]) => [column.name, key]));
  const names = columns.map(([, column]) => column.name);
  const tableName = getTableName(table);

  const toFields = (row: Record<string, unknown>): ChangeFields => {
    const fields: ChangeFields = {};
    for (const [key, column] of columns) if (key in row && row[key] !== undefined) fields[column.name] = row[key];
    return fields;
  };

  return {
    kind,
    capture(deps, cabinetId, recordId, row, op) {
      recordChange(deps, cabinetId, { kind, recordId, op, fields: toFields(row as Record<string, unknown>) });
    },
    *snapshot(db, cabinetId) {
      // By pages of rowid: the caller writes between two reads, which an open iterator forbids.
      const select = db.sqlite.prepare(`SELECT rowid AS _position, id, ${names.map((n) => `"${n}"`).join(', ')} FROM "${tableName}" WHERE cabinet_id = ? AND rowid > ? ORDER BY rowid LIMIT 1000`);
      for (let after = 0; ; ) {
        const rows = select.all(cabinetId, after) as Record<string, unknown>[];
        for (const { _position, id, ...fields } of rows) {
          after = Number(_position);
          yield { recordId: String(id), fields };
        }
        if (rows.length < 1000) return;
      }
    },
    write(orm, cabinetId, recordId, fields) {
      const values: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(fields)) {
        const key = keyOfName.get(name);
        // A field this version does not know (written by a newer install) has no column here.
        if (key !== undefined) values[key] = value;
      }
      if (Object.keys(values).length === 0) return true;
      const exists = orm.select({ id: table.id }).from(table as SQLiteTable).where(and(eq(table.cabinetId, cabinetId), eq(table.id, recordId))).get();
      if (exists) {
        orm.update(table).set(values as never).where(and(eq(table.cabinetId, cabinetId), eq(table.id, recordId))).run();
        return true;
      }
      try {
        orm.insert(table).values({ ...values, id: recordId, cabinetId } as never).run();
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_NOTNULL') return false;
        throw err;
      }
    },
  };
}
