import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator';
import { join } from 'node:path';
import postgres, { type Sql } from 'postgres';
import { ApiError, DatabaseVersionError } from '../errors.js';
import { packageRoot } from '../paths.js';

export interface HubDatabase {
  /** The driver: every query of the hub is one of its tagged templates, and LISTEN and the migrations' advisory lock too. */
  sql: Sql;
  /** Closes every connection, waiting up to a few seconds for running queries. */
  close(): Promise<void>;
}

/** Found from dist/ as from the sources: the SQL lives beside the sources, in the package. */
export function hubMigrationsFolder(): string {
  return join(packageRoot(), 'server', 'hub', 'migrations');
}

/** The URL without its password, for messages and logs. */
function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unreadable URL)';
  }
}

/** postgres.js's own codes for a connection lost or refused, and PostgreSQL's for a server stopping, starting or full. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

/**
 * A request that failed because PostgreSQL is out of reach is a 503 that says so, not a bug (500):
 * nothing was stored, and the installs try again by themselves.
 */
export function databaseUnavailable(error: Error): ApiError | undefined {
  // postgres.js puts its code on the error itself; an error wrapped on its way up (new Error(…, { cause })) has it on a cause.
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
      return new ApiError(
        'hub_database_unavailable',
        'The hub cannot reach its database right now; nothing was stored. Try again in a moment.',
      );
    }
  }
  return undefined;
}

/**
 * Times (timestamp, timestamptz, date, time, their arrays) and numeric arrays are read as
 * PostgreSQL writes them out and sent as given: the queries send ISO strings cast in SQL
 * (`::timestamptz`) and read a time with `new Date(text)`. json and jsonb parameters are sent as
 * given: the queries send JSON text and cast it in SQL. The pool's connections share these.
 */
const TEXT_TYPES = [1082, 1083, 1114, 1115, 1182, 1184, 1185, 1231];
const JSON_TYPES = [114, 3802];
const asGiven = (value: unknown) => value;

/**
 * Connects to the hub's PostgreSQL (no query yet: postgres.js connects on first use). `max` is the
 * pool's size per process; LISTEN takes one more connection of its own.
 */
export function connectHub(url: string, options: { max?: number } = {}): HubDatabase {
  const sql = postgres(url, {
    max: options.max ?? 10,
    // NOTICEs (CREATE … IF NOT EXISTS on an existing object) are not worth a log line.
    onnotice: () => undefined,
    // Idle connections go back after a while, so a quiet hub holds few.
    idle_timeout: 60,
    connect_timeout: 10,
  });
  for (const oid of TEXT_TYPES) {
    sql.options.parsers[oid] = asGiven;
    sql.options.serializers[oid] = asGiven;
  }
  for (const oid of JSON_TYPES) sql.options.serializers[oid] = asGiven;
  return { sql, close: () => sql.end({ timeout: 5 }) };
}

/**
 * Connects and brings the schema up to date: what every hub command does first. A database this
 * build must not touch is refused as it is; one that cannot be reached is said so, without the
 * URL's password.
 */
export async function openHubDatabase(url: string): Promise<HubDatabase> {
  const database = connectHub(url);
  try {
    await migrateHub(database.sql);
    await assertTemporaryTables(database.sql);
    return database;
  } catch (err) {
    await database.close().catch(() => undefined);
    if (err instanceof DatabaseVersionError) throw err;
    throw new Error(`Cannot use the hub's PostgreSQL at ${redactDatabaseUrl(url)}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * The hub stages a large push in a temporary table (store.ts stageChanges): a role without the
 * right to make one (a server that revoked TEMPORARY from PUBLIC) is told so at start, not with an
 * error on the first upload.
 */
async function assertTemporaryTables(sql: Sql): Promise<void> {
  const [row] = await sql<{ allowed: boolean; role: string; database: string }[]>`
    SELECT has_database_privilege(current_database(), 'TEMPORARY') AS allowed, current_user AS role, current_database() AS database`;
  if (row && !row.allowed) {
    throw new Error(
      `the role ${row.role} may not create temporary tables in ${row.database}, where the hub stages large uploads: GRANT TEMPORARY ON DATABASE ${row.database} TO ${row.role}`,
    );
  }
}

/** Any constant; pg_advisory_xact_lock takes a bigint, and this one says "hub migrations" to whoever looks at pg_locks. */
const MIGRATION_LOCK = 0x4855_425f_4d49; // "HUB_MI"
const BOOKKEEPING = 'drizzle.__drizzle_migrations';

/**
 * Applies drizzle-kit's migrations in one transaction under a transaction-level advisory lock, so
 * that hub processes starting together migrate once (the others wait, then find nothing to do).
 * Same bookkeeping table as drizzle's own migrator. Refuses, before changing anything, a database
 * that records a migration this build does not know (a newer Courtier's) or that holds tables but
 * no Courtier bookkeeping (someone else's database).
 */
export async function migrateHub(
  sql: Sql,
  migrations: MigrationMeta[] = readMigrationFiles({ migrationsFolder: hubMigrationsFolder() }),
): Promise<{ applied: number }> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}::bigint)`;
    const [state] = await tx<{ bookkept: boolean; tables: number }[]>`
      SELECT to_regclass(${BOOKKEEPING}) IS NOT NULL AS bookkept,
             (SELECT count(*)::int FROM pg_tables WHERE schemaname = 'public') AS tables`;
    if (!state?.bookkept && (state?.tables ?? 0) > 0) {
      throw new DatabaseVersionError(
        'This database holds tables but is not a Courtier hub’s; refusing to touch it. Give the hub a database of its own.',
      );
    }
    await tx`CREATE SCHEMA IF NOT EXISTS drizzle`;
    await tx`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint)`;
    const applied = await tx<{ hash: string }[]>`SELECT hash FROM drizzle.__drizzle_migrations ORDER BY created_at`;
    const known = new Set(migrations.map((m) => m.hash));
    const unknown = applied.filter((row) => !known.has(row.hash));
    if (unknown.length > 0) {
      throw new DatabaseVersionError(
        `This hub database was written by a newer version of Courtier (${applied.length} schema migrations; this version knows ${migrations.length}). ` +
          'Upgrade Courtier on every hub process. Nothing was changed.',
      );
    }
    const done = new Set(applied.map((row) => row.hash));
    let count = 0;
    for (const migration of migrations) {
      if (done.has(migration.hash)) continue;
      for (const statement of migration.sql) if (statement.trim()) await tx.unsafe(statement);
      await tx`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`;
      count++;
    }
    return { applied: count };
  });
}
