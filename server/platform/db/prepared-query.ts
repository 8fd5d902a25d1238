import type Sqlite from 'better-sqlite3';
import { Column, getTableColumns, is, Param, Placeholder, sql, SQL } from 'drizzle-orm';
import type { AnySQLiteColumn, SQLiteTable, SQLiteUpdateSetSource } from 'drizzle-orm/sqlite-core';
import type { Orm } from './open.js';

/**
 * The values of a query's placeholders, by name. A name the query uses and the values do not give
 * binds NULL: a row to insert may leave out its optional columns.
 */
export type PlaceholderValues = Record<string, unknown>;

/** What drizzle's prepared query holds and this module runs itself (its `stmt`, `query`, `fields`). */
interface DrizzlePrepared {
  stmt: Sqlite.Statement;
  query: { sql: string; params: unknown[] };
  fields?: { path: string[]; field: unknown }[];
  customResultMapper?: unknown;
  run(values?: PlaceholderValues): Sqlite.RunResult;
  get(values?: PlaceholderValues): unknown;
  all(values?: PlaceholderValues): unknown[];
}

type Decode = (value: unknown) => unknown;

/** How a selected field's value is read: a column's or an SQL expression's decoder; undefined when it is stored as JS holds it. */
function decoderOf(field: unknown): Decode | undefined | false {
  if (is(field, Column)) {
    return field.mapFromDriverValue === Column.prototype.mapFromDriverValue ? undefined : (value) => field.mapFromDriverValue(value);
  }
  // An expression's decoder (`.mapWith(Number)`) is drizzle's internal field.
  const decoderOfSql = (expression: SQL) => (expression as unknown as { decoder: { mapFromDriverValue: Decode } }).decoder;
  if (is(field, SQL)) return (value) => decoderOfSql(field).mapFromDriverValue(value);
  if (is(field, SQL.Aliased)) return (value) => decoderOfSql(field.sql).mapFromDriverValue(value);
  return false;
}

/**
 * Makes a row's object from the array the driver read, with each field's decoder chosen once:
 * drizzle's own mapping looks up each field's kind and walks its path on every row.
 */
function rowReader(fields: { path: string[]; field: unknown }[]): ((values: unknown[]) => unknown) | undefined {
  const keys: string[] = [];
  const decoders: (Decode | undefined)[] = [];
  for (const { path, field } of fields) {
    const decoder = decoderOf(field);
    // A join's nested result (`{ job: …, cabinet: … }`) keeps drizzle's mapping.
    if (path.length !== 1 || decoder === false) return undefined;
    keys.push(path[0]!);
    decoders.push(decoder);
  }
  return (values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const value = values[i];
      const decode = decoders[i];
      row[keys[i]!] = value === null ? null : decode ? decode(value) : value;
    }
    return row;
  };
}

/** A constant as an SQL literal; undefined for a value that stays bound (a blob). */
function literalOf(value: unknown): string | undefined {
  if (value === null) return 'NULL';
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value))) return String(value);
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  return undefined;
}

/**
 * The query's SQL with its constants written in (the values of the builder's code, not of a
 * placeholder: a prepared query's constants never change), and the parameters left to bind.
 * SQLite plans a bound value as unknown: a partial index whose condition names a status, or a
 * subquery's `LIMIT 1`, then goes unused or costs a plan on every run.
 */
function withConstantsWritten(text: string, params: unknown[]): { sql: string; params: unknown[] } {
  const bound: unknown[] = [];
  let out = '';
  let next = 0;
  let quote: string | undefined;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '?') {
      const param = params[next++];
      const literal = is(param, Placeholder) || is(param, Param) ? undefined : literalOf(param);
      if (literal !== undefined) {
        out += literal;
        continue;
      }
      bound.push(param);
    }
    out += char;
  }
  return { sql: out, params: bound };
}

/**
 * The driver's values for the query's parameters. A column's encoder (booleans, JSON) turns a value
 * given for a placeholder into what SQLite stores, but never a missing one or null, which stay NULL
 * (drizzle's own filling would store the JSON text `null` or the boolean 0).
 */
function binder(params: unknown[]): (values: PlaceholderValues) => unknown[] {
  const binds = params.map((param): ((values: PlaceholderValues) => unknown) => {
    if (is(param, Placeholder)) return (values) => values[param.name] ?? null;
    if (is(param, Param) && is(param.value, Placeholder)) {
      const { name } = param.value;
      return (values) => {
        const value = values[name];
        return value === undefined || value === null ? null : param.encoder.mapToDriverValue(value);
      };
    }
    return () => param;
  });
  return (values) => binds.map((bind) => bind(values));
}

/** Runs drizzle's prepared query on a statement of its SQL with the constants written in, with this module's binding and row reading. */
function runFast<Q>(client: Sqlite.Database, query: Q): Q {
  const prepared = query as unknown as DrizzlePrepared;
  const written = withConstantsWritten(prepared.query.sql, prepared.query.params);
  const stmt = client.prepare(written.sql);
  prepared.stmt = stmt;
  const bind = binder(written.params);
  prepared.run = (values = {}) => stmt.run(...bind(values));
  const read = prepared.fields && !prepared.customResultMapper ? rowReader(prepared.fields) : undefined;
  if (read) {
    // The statement is this query's alone: rows come as arrays.
    stmt.raw(true);
    prepared.get = (values = {}) => {
      const row = stmt.get(...bind(values)) as unknown[] | undefined;
      return row && read(row);
    };
    prepared.all = (values = {}) => (stmt.all(...bind(values)) as unknown[][]).map(read);
  } else if (stmt.reader) {
    prepared.get = (values = {}) => stmt.get(...bind(values));
    prepared.all = (values = {}) => stmt.all(...bind(values));
  }
  return query;
}

/**
 * A query written once with drizzle's builder, its values as `sql.placeholder(name)`, prepared once
 * per connection and kept on it: building and preparing a query on every call cost more than
 * running it on the API's hot paths (a list page, a create, a sync capture). `shape` chooses among
 * forms of one query (which optional filters it has); each form is prepared once.
 *
 *     const PAGE = preparedQuery((orm, byStage: boolean) => orm.select().from(t).where(…).limit(sql.placeholder('limit')));
 *     PAGE(orm, true).all({ cabinetId, stage, limit });
 */
export function preparedQuery<Shape extends (string | number | boolean)[], Q>(
  build: (orm: Orm, ...shape: Shape) => { prepare(): Q },
): (orm: Orm, ...shape: Shape) => Q {
  return (orm, ...shape) => {
    const forms = orm.cacheOf(build, () => new Map<string, Q>());
    const key = shape.join('\u0000');
    let query = forms.get(key);
    if (query === undefined) {
      query = runFast(orm.$client, build(orm, ...shape).prepare());
      forms.set(key, query);
    }
    return query;
  };
}

/** Every column of the table as a placeholder named after its property: for an insert of a whole row, prepared once. */
export function placeholdersFor<T extends SQLiteTable>(table: T): Record<keyof T['$inferInsert'], Placeholder> {
  return Object.fromEntries(Object.keys(getTableColumns(table)).map((key) => [key, sql.placeholder(key)])) as Record<
    keyof T['$inferInsert'],
    Placeholder
  >;
}

/**
 * The `.set()` of an update prepared once: each column named set to the placeholder of its name,
 * which the column's encoder (JSON, booleans) turns into what SQLite stores, null staying NULL.
 */
export function setPlaceholders<T extends SQLiteTable>(table: T, keys: readonly string[]): SQLiteUpdateSetSource<T> {
  const columns = getTableColumns(table);
  const unknown = keys.filter((key) => !(key in columns));
  if (unknown.length > 0) throw new Error(`${unknown.join(', ')}: no such column to set.`);
  return Object.fromEntries(keys.map((key) => [key, sql.placeholder(key)])) as SQLiteUpdateSetSource<T>;
}

/** `column IN` a list bound as one JSON array: one statement whatever the list's length, where `IN (?, ?, …)` prepares one per length. */
export function inJsonArray(column: AnySQLiteColumn, values: Placeholder | string): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${values}))`;
}
