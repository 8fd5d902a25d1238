import type Sqlite from 'better-sqlite3';
import { Column, getTableColumns, getTableName } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Orm } from './open.js';

/**
 * `IN` a list bound as one JSON array (`JSON.stringify(values)`): one prepared statement whatever
 * the list's length, where `IN (?, ?, …)` would prepare one per length.
 */
export const IN_JSON_ARRAY = 'IN (SELECT value FROM json_each(?))';

/**
 * A table's statements for the API's hot paths, derived once from its drizzle definition: each is
 * prepared once per connection and kept on it (`orm.prepared`, `orm.cacheOf`), and rows are read as
 * arrays and mapped by position. drizzle builds its SQL, prepares it and maps each row through generic
 * checks on every call, which costs more than the query itself on a list page or a create.
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

/**
 * What makes a row's object from the array the driver read: one object literal with the keys in
 * column order, made once per table. Every row then gets its shape at once; assigning 20 to 30 keys
 * in a loop sent each through V8's generic (megamorphic) store, which cost more than reading the
 * row (a 50-row page maps 50). `maps[i]` converts column i (booleans, JSON); NULL stays null. The
 * keys are the schema's property names, written as JSON string literals.
 */
function rowReader<Row>(keys: readonly string[], maps: readonly (((value: unknown) => unknown) | undefined)[]): (values: unknown[]) => Row {
  const fields = keys.map((key, i) => {
    const value = maps[i] ? `maps[${i}](values[${i}])` : `values[${i}]`;
    return `${JSON.stringify(key)}: values[${i}] === null || values[${i}] === undefined ? null : ${value}`;
  });
  return new Function('maps', `return (values) => ({ ${fields.join(', ')} });`)(maps) as (values: unknown[]) => Row;
}

/** The map's value for a key, made by `create` and kept the first time. */
function entryOf<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

export function tableSql<T extends SQLiteTable>(table: T): TableSql<T> {
  const columns = Object.entries(getTableColumns(table)) as [string, SQLiteColumn][];
  const names = columns.map(([, column]) => `"${column.name}"`).join(', ');
  const name = `"${getTableName(table)}"`;
  const select = `SELECT ${names} FROM ${name}`;
  const insert = `INSERT INTO ${name} (${names}) VALUES (${columns.map(() => '?').join(', ')})`;
  const insertIfAbsent = `${insert} ON CONFLICT DO NOTHING`;
  const keys = columns.map(([key]) => key);
  // Most columns store what JS holds (text, numbers): only the others (booleans, JSON) are mapped.
  const toDriverOf = columns.map(([, column]) =>
    column.mapToDriverValue === Column.prototype.mapToDriverValue ? undefined : (value: unknown) => column.mapToDriverValue(value),
  );
  const fromDriverOf = columns.map(([, column]) =>
    column.mapFromDriverValue === Column.prototype.mapFromDriverValue ? undefined : (value: unknown) => column.mapFromDriverValue(value),
  );

  const toDriver = (row: T['$inferInsert']): unknown[] => {
    const record = row as Record<string, unknown>;
    return keys.map((key, i) => {
      const value = record[key];
      if (value === undefined || value === null) return null;
      const map = toDriverOf[i];
      return map ? map(value) : value;
    });
  };
  const fromDriver = rowReader<T['$inferSelect']>(keys, fromDriverOf);
  const byKey = new Map(columns);

  /**
   * This table's statements on a connection, found by what the caller wrote: its clauses (often
   * the same literal on every call), and for an update the SQL it adds and the columns it sets.
   * Building the whole SQL text again and hashing it on every call cost more than some of the
   * statements (a row of `jobs` names 32 columns). Each statement is this table's alone, so it is
   * switched to arrays once.
   */
  const statementsOn = (orm: Orm) =>
    orm.cacheOf(table, () => ({
      reads: new Map<string, Sqlite.Statement>(),
      updates: new Map<string, Map<string, Map<string, Sqlite.Statement>>>(),
    }));
  const query = (orm: Orm, clauses: string): Sqlite.Statement =>
    entryOf(statementsOn(orm).reads, clauses, () => orm.$client.prepare(`${select} ${clauses}`).raw(true));
  /** An update's statement by its clauses, then the SQL it adds (`also`), then its columns. */
  const updateStatement = (orm: Orm, set: readonly string[], also: SqlPart | undefined, clauses: string): Sqlite.Statement => {
    const byAlso = entryOf(statementsOn(orm).updates, clauses, () => new Map<string, Map<string, Sqlite.Statement>>());
    const byColumns = entryOf(byAlso, also?.sql ?? '', () => new Map<string, Sqlite.Statement>());
    return entryOf(byColumns, set.join(','), () => {
      const assignments = [...set.map((key) => `"${byKey.get(key)?.name}" = ?`), ...(also ? [also.sql] : [])].join(', ');
      return orm.$client.prepare(`UPDATE ${name} SET ${assignments} ${clauses} RETURNING ${names}`).raw(true);
    });
  };

  return {
    insert: (orm, row) => void orm.prepared(insert).run(toDriver(row)),
    insertIfAbsent: (orm, row) => orm.prepared(insertIfAbsent).run(toDriver(row)).changes > 0,
    get(orm, clauses, ...values) {
      const row = query(orm, clauses).get(...values) as unknown[] | undefined;
      return row && fromDriver(row);
    },
    all: (orm, clauses, ...values) => (query(orm, clauses).all(...values) as unknown[][]).map(fromDriver),
    update: (orm, changes, clauses, ...values) => update(orm, changes, undefined, clauses, values),
    updateWith: (orm, changes, also, clauses, ...values) => update(orm, changes, also, clauses, values),
  };

  function update(
    orm: Orm,
    changes: Partial<T['$inferInsert']>,
    also: SqlPart | undefined,
    clauses: string,
    values: unknown[],
  ): T['$inferSelect'][] {
    const set: string[] = [];
    const setValues: unknown[] = [];
    for (const [key, value] of Object.entries(changes as Record<string, unknown>)) {
      const column = byKey.get(key);
      if (value === undefined || !column) continue;
      set.push(key);
      setValues.push(value === null ? null : column.mapToDriverValue(value));
    }
    if (set.length === 0) throw new Error(`An update of ${name} needs at least one column to set.`);
    return (updateStatement(orm, set, also, clauses).all(...setValues, ...(also?.values ?? []), ...values) as unknown[][]).map(fromDriver);
  }
}
