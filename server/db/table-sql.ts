import { getTableColumns, getTableName } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Orm } from './open.js';

/**
 * A table's statements for the API's hot paths, derived once from its drizzle definition: run
 * through `orm.prepared`, each is prepared once per connection, and rows are read as arrays and
 * mapped by position. drizzle builds its SQL, prepares it and maps each row through generic
 * checks on every call, which costs more than the query itself on a list page or a create (see
 * BENCHMARKS.md).
 */
export interface TableSql<T extends SQLiteTable> {
  /** Inserts a whole row: a missing value is NULL, not the column's default. */
  insert(orm: Orm, row: T['$inferInsert']): void;
  /** The first row of `SELECT <every column> FROM <table> <clauses>` (WHERE, ORDER BY, LIMIT). */
  get(orm: Orm, clauses: string, ...values: unknown[]): T['$inferSelect'] | undefined;
  /** Every row of the same. */
  all(orm: Orm, clauses: string, ...values: unknown[]): T['$inferSelect'][];
}

export function tableSql<T extends SQLiteTable>(table: T): TableSql<T> {
  const columns = Object.entries(getTableColumns(table)) as [string, SQLiteColumn][];
  const names = columns.map(([, column]) => `"${column.name}"`).join(', ');
  const name = `"${getTableName(table)}"`;
  const select = `SELECT ${names} FROM ${name}`;
  const insert = `INSERT INTO ${name} (${names}) VALUES (${columns.map(() => '?').join(', ')})`;

  const toDriver = (row: T['$inferInsert']): unknown[] => {
    const record = row as Record<string, unknown>;
    return columns.map(([key, column]) => {
      const value = record[key];
      return value === undefined || value === null ? null : column.mapToDriverValue(value);
    });
  };
  const fromDriver = (values: unknown[]): T['$inferSelect'] => {
    const row: Record<string, unknown> = {};
    columns.forEach(([key, column], i) => {
      const value = values[i];
      row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    });
    return row as T['$inferSelect'];
  };
  // raw(true) on each use: a statement is shared by its SQL text, and this text is only ever read as arrays.
  const query = (orm: Orm, clauses: string) => orm.prepared(`${select} ${clauses}`).raw(true);

  return {
    insert: (orm, row) => void orm.prepared(insert).run(toDriver(row)),
    get(orm, clauses, ...values) {
      const row = query(orm, clauses).get(...values) as unknown[] | undefined;
      return row && fromDriver(row);
    },
    all: (orm, clauses, ...values) => (query(orm, clauses).all(...values) as unknown[][]).map(fromDriver),
  };
}
