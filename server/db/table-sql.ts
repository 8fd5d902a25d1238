import { getTableColumns, getTableName } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Orm } from './open.js';

/**
 * `IN` a list bound as one JSON array (`JSON.stringify(values)`): one prepared statement whatever
 * the list's length, where `IN (?, ?, …)` would prepare one per length.
 */
export const IN_JSON_ARRAY = 'IN (SELECT value FROM json_each(?))';

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
  /** The same, unless it would break a unique constraint (`ON CONFLICT DO NOTHING`): whether it was inserted. */
  insertIfAbsent(orm: Orm, row: T['$inferInsert']): boolean;
  /** The first row of `SELECT <every column> FROM <table> <clauses>` (WHERE, ORDER BY, LIMIT). */
  get(orm: Orm, clauses: string, ...values: unknown[]): T['$inferSelect'] | undefined;
  /** Every row of the same. */
  all(orm: Orm, clauses: string, ...values: unknown[]): T['$inferSelect'][];
  /**
   * `UPDATE <table> SET <each given column> <clauses>`, the updated rows returned; an undefined
   * value leaves its column alone, as in drizzle's `set`. One statement per set of columns.
   */
  update(orm: Orm, changes: Partial<T['$inferInsert']>, clauses: string, ...values: unknown[]): T['$inferSelect'][];
  /**
   * The same, with assignments of the caller's after the columns' (SQL and its `?` values): for a
   * column whose new value SQL computes, `UPDATE <table> SET <each given column>, <also.sql> <clauses>`.
   */
  updateWith(orm: Orm, changes: Partial<T['$inferInsert']>, also: SqlPart, clauses: string, ...values: unknown[]): T['$inferSelect'][];
}

/** A piece of SQL and the values of its `?` placeholders, in order. */
export interface SqlPart {
  sql: string;
  values: readonly unknown[];
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

  const byKey = new Map(columns);

  return {
    insert: (orm, row) => void orm.prepared(insert).run(toDriver(row)),
    insertIfAbsent: (orm, row) => orm.prepared(`${insert} ON CONFLICT DO NOTHING`).run(toDriver(row)).changes > 0,
    get(orm, clauses, ...values) {
      const row = query(orm, clauses).get(...values) as unknown[] | undefined;
      return row && fromDriver(row);
    },
    all: (orm, clauses, ...values) => (query(orm, clauses).all(...values) as unknown[][]).map(fromDriver),
    update: (orm, changes, clauses, ...values) => update(orm, changes, undefined, clauses, values),
    updateWith: (orm, changes, also, clauses, ...values) => update(orm, changes, also, clauses, values),
  };

  function update(orm: Orm, changes: Partial<T['$inferInsert']>, also: SqlPart | undefined, clauses: string, values: unknown[]): T['$inferSelect'][] {
    const set = Object.entries(changes as Record<string, unknown>).filter(([key, value]) => value !== undefined && byKey.has(key));
    if (set.length === 0) throw new Error(`An update of ${name} needs at least one column to set.`);
    const assignments = [...set.map(([key]) => `"${byKey.get(key)?.name}" = ?`), ...(also ? [also.sql] : [])].join(', ');
    const setValues = set.map(([key, value]) => (value === null ? null : byKey.get(key)?.mapToDriverValue(value)));
    const statement = orm.prepared(`UPDATE ${name} SET ${assignments} ${clauses} RETURNING ${names}`).raw(true);
    return (statement.all(...setValues, ...(also?.values ?? []), ...values) as unknown[][]).map(fromDriver);
  }
}
