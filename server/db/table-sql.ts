import { getTableColumns, getTableName } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';

/**
 * A table's SQL for the API's hot paths, derived once from its drizzle definition: run through
 * `orm.prepared`, the statement is prepared once per connection and rows are mapped by position.
 * drizzle builds its SQL, prepares it and maps each row through generic checks on every call,
 * which costs more than the query itself on a list page or a create (see BENCHMARKS.md).
 */
export interface TableSql<T extends SQLiteTable> {
  /** `SELECT <every column> FROM "<table>"`: add the WHERE, ORDER BY and LIMIT. */
  select: string;
  /** `INSERT INTO "<table>" (<every column>) VALUES (?, …)`. */
  insert: string;
  /** The values of `insert`, in order; the row must be whole: a missing value is NULL, not the column's default. */
  values(row: T['$inferInsert']): unknown[];
  /** A row read with `select` in raw mode (an array), as drizzle would have given it. */
  row(values: unknown[]): T['$inferSelect'];
}

export function tableSql<T extends SQLiteTable>(table: T): TableSql<T> {
  const columns = Object.entries(getTableColumns(table)) as [string, SQLiteColumn][];
  const names = columns.map(([, column]) => `"${column.name}"`).join(', ');
  const name = `"${getTableName(table)}"`;
  return {
    select: `SELECT ${names} FROM ${name}`,
    insert: `INSERT INTO ${name} (${names}) VALUES (${columns.map(() => '?').join(', ')})`,
    values(row) {
      const record = row as Record<string, unknown>;
      return columns.map(([key, column]) => {
        const value = record[key];
        return value === undefined || value === null ? null : column.mapToDriverValue(value);
      });
    },
    row(values) {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) {
        const [key, column] = columns[i] as [string, SQLiteColumn];
        const value = values[i];
        row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
      }
      return row as T['$inferSelect'];
    },
  };
}
