import { getTableColumns, getTableName } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { SyncedKind } from '../../shared/sync-protocol.js';
import type { Deps } from '../deps.js';
import type { Orm, Database } from '../db/open.js';
import { recordChange, type ChangeFields, type ChangeKind } from './capture.js';

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
  capture(deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>, cabinetId: string, recordId: string, row: Partial<T['$inferSelect']>, how?: ChangeKind): void;
}

/**
 * The sync of a table whose rows have an `id` and a `cabinet_id`: its fields are the columns by SQL
 * name (values as SQLite stores them), minus the cabinet (the hub knows it) and the `local` columns,
 * which mean something on this install only (a lease, a local file, a webhook subscription).
 */
export function syncedTable<T extends TableWithId>(kind: SyncedKind, table: T, options: { local?: readonly (keyof T['$inferSelect'])[] } = {}): SyncedTable<T> {
  const local = new Set<string>(['cabinetId', 'id', ...(options.local ?? []).map(String)]);
  const columns = Object.entries(getTableColumns(table) as Record<string, SQLiteColumn>).filter(([key]) => !local.has(key));
  const columnOfName = new Map(columns.map(([, column]) => [column.name, column]));
  const names = columns.map(([, column]) => column.name);
  const tableName = getTableName(table);
  const where = `"${table.cabinetId.name}" = ? AND "${table.id.name}" = ?`;

  const toFields = (row: Record<string, unknown>): ChangeFields => {
    const fields: ChangeFields = {};
    for (const [key, column] of columns) if (key in row && row[key] !== undefined) fields[column.name] = row[key];
    return fields;
  };

  return {
    kind,
    capture(deps, cabinetId, recordId, row, how) {
      recordChange(deps, cabinetId, { kind, recordId, how, fields: () => toFields(row as Record<string, unknown>) });
    },
    *snapshot(db, cabinetId) {
      // By pages of rowid: the caller writes between two reads, which an open iterator forbids.
      // NOT INDEXED: through the cabinet's index, SQLite would read and sort every remaining row of
      // the cabinet for each page (100,000 records: 3 s instead of 0.3 s); the rowid range is the walk.
      const select = db.sqlite
        .prepare(`SELECT rowid, id, ${names.map((n) => `"${n}"`).join(', ')} FROM "${tableName}" NOT INDEXED WHERE cabinet_id = ? AND rowid > ? ORDER BY rowid LIMIT 1000`)
        .raw();
      for (let after = 0; ; ) {
        const rows = select.all(cabinetId, after) as unknown[][];
        for (const row of rows) {
          after = Number(row[0]);
          const fields: ChangeFields = {};
          names.forEach((name, i) => {
            fields[name] = row[i + 2];
          });
          yield { recordId: String(row[1]), fields };
        }
        if (rows.length < 1000) return;
      }
    },
    write(orm, cabinetId, recordId, fields) {
      const names: string[] = [];
      const values: unknown[] = [];
      for (const [name, value] of Object.entries(fields)) {
        const column = columnOfName.get(name);
        // A field this version does not know (written by a newer install) has no column here.
        if (column === undefined) continue;
        names.push(`"${name}"`);
        // As drizzle binds a value (a boolean column stores 0 or 1); null stays null.
        values.push(value === null || value === undefined ? null : column.mapToDriverValue(value));
      }
      if (names.length === 0) return true;
      if (orm.prepared(`SELECT 1 FROM "${tableName}" WHERE ${where}`).get(cabinetId, recordId) !== undefined) {
        orm.prepared(`UPDATE "${tableName}" SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE ${where}`).run(...values, cabinetId, recordId);
        return true;
      }
      try {
        orm.prepared(`INSERT INTO "${tableName}" (${names.join(', ')}, "${table.id.name}", "${table.cabinetId.name}") VALUES (${names.map(() => '?').join(', ')}, ?, ?)`).run(...values, recordId, cabinetId);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_NOTNULL') return false;
        throw err;
      }
    },
  };
}
