import Sqlite from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseVersionError } from '../../errors.js';
import { packageRoot } from '../../paths.js';
import { checkpointInBackground, type CheckpointOptions } from './checkpoints.js';
import { createCommitGroup, type CommitGroup } from './commit-group.js';
import * as schema from '../../db/schema.js';
import { connectionTransactions, type Transactions } from './transactions.js';

/**
 * drizzle's handle, with the better-sqlite3 connection under it (`$client`), and what an owner keeps
 * on this connection (`cacheOf(owner, create)`, made by `create` on first use): the statements a
 * query prepared once holds (prepared-query.ts) belong to their connection.
 */
export type Orm = BetterSQLite3Database<typeof schema> & {
  $client: Sqlite.Database;
  cacheOf<T>(owner: object, create: () => T): T;
};

function cachesByOwner(): <T>(owner: object, create: () => T) => T {
  const byOwner = new WeakMap<object, unknown>();
  return <T>(owner: object, create: () => T): T => {
    if (!byOwner.has(owner)) byOwner.set(owner, create());
    return byOwner.get(owner) as T;
  };
}

/** A connection; its transactions run through `transaction` and `immediateTransaction` (transactions.ts). */
export interface Database extends Transactions {
  sqlite: Sqlite.Database;
  orm: Orm;
  /** The connection's group commit (commit-group.ts): the API's idempotent POSTs and the robot worker's writes. */
  commitGroup: CommitGroup;
  close(): void;
}

/** "CRTR": marks the file as Courtier's so that another program's database is refused, not migrated. */
const APPLICATION_ID = 0x43525452;
const MIGRATIONS_TABLE = '__drizzle_migrations';

export function migrationsFolder(): string {
  return join(packageRoot(), 'server', 'db', 'migrations');
}

export function databaseFile(dataDir: string): string {
  return join(dataDir, 'courtier.sqlite');
}

/**
 * Opens (creating if needed) the SQLite file, sets WAL, foreign keys and a busy timeout, and
 * brings the schema up to date. A database written by a newer Courtier is refused, untouched.
 */
export interface OpenOptions {
  busyTimeoutMs?: number;
  /**
   * Told the SQL of every statement run on the connection (with its values bound): for the tests
   * that count statements per request. Never set in the service, where it would cost every query.
   */
  onStatement?: (sql: string) => void;
  /**
   * Checkpoints the WAL from a worker thread instead of inside commits (see checkpoints.ts): for
   * the long-running service, whose event loop must not stall. The CLI keeps SQLite's default.
   */
  backgroundCheckpoints?: CheckpointOptions;
}

export function openDatabase(file: string, options: OpenOptions = {}): Database {
  mkdirSync(dirname(file), { recursive: true });
  const sqlite = new Sqlite(file, options.onStatement ? { verbose: (sql) => options.onStatement?.(String(sql)) } : {});
  try {
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    sqlite.pragma('journal_mode = WAL');
    // WAL + NORMAL: a committed transaction survives a crash of the process (only power loss can cost the last ones).
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // The statement journal of savepoints in memory. The API's group commit (commit-group.ts)
    // nests a savepoint per request in a transaction that touches more than 16 pages, past which
    // SQLite spills that journal to a temporary file: an open() and a write() per page on every
    // commit, a visible share of a create's CPU. Nothing here sorts or vacuums large temporary
    // data.
    sqlite.pragma('temp_store = MEMORY');
    // What a migration drops (stored responses of the previous version, with their secrets) is
    // overwritten in the file, freed pages included.
    sqlite.pragma('secure_delete = ON');
    applyMigrations(sqlite, readMigrationFiles({ migrationsFolder: migrationsFolder() }));
    // Afterwards, deleted rows are overwritten wherever that costs no extra I/O (ON would slow
    // every write of the API): what a purge frees whole may linger in free pages.
    sqlite.pragma('secure_delete = FAST');
  } catch (err) {
    sqlite.close();
    throw err;
  }
  const orm = Object.assign(drizzle(sqlite, { schema }), { cacheOf: cachesByOwner() });
  const checkpoints = options.backgroundCheckpoints ? checkpointInBackground(sqlite, file, options.backgroundCheckpoints) : undefined;
  const transactions = connectionTransactions(sqlite);
  return {
    sqlite,
    orm,
    ...transactions,
    commitGroup: createCommitGroup(sqlite, transactions),
    close: () => {
      checkpoints?.stop();
      sqlite.close();
    },
  };
}

/**
 * Applies drizzle-kit's migrations inside one IMMEDIATE transaction, so that a server and a CLI
 * opening the same file at once never both migrate. Same bookkeeping table as drizzle's migrator.
 */
export function applyMigrations(sqlite: Sqlite.Database, migrations: MigrationMeta[]): void {
  const run = sqlite.transaction(() => {
    const appId = sqlite.pragma('application_id', { simple: true }) as number;
    const hasTables = (sqlite.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'`).get() as { n: number }).n > 0;
    if (appId !== APPLICATION_ID && (appId !== 0 || (hasTables && !tableExists(sqlite, MIGRATIONS_TABLE)))) {
      throw new DatabaseVersionError('This file is not a Courtier database; refusing to touch it. Choose a Courtier data folder.');
    }
    sqlite.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
    const applied = sqlite.prepare(`SELECT hash, created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at`).all() as {
      hash: string;
      created_at: number;
    }[];
    const known = new Set(migrations.map((m) => m.hash));
    const unknown = applied.filter((a) => !known.has(a.hash));
    if (unknown.length > 0) {
      throw new DatabaseVersionError(
        `This database was written by a newer version of Courtier (${applied.length} schema migrations; this version knows ${migrations.length}). ` +
          'Upgrade Courtier, or use another data folder. Nothing was changed.',
      );
    }
    const done = new Set(applied.map((a) => a.hash));
    const insert = sqlite.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES (?, ?)`);
    for (const migration of migrations) {
      if (done.has(migration.hash)) continue;
      for (const statement of migration.sql) if (statement.trim()) sqlite.exec(statement);
      insert.run(migration.hash, migration.folderMillis);
    }
    sqlite.pragma(`application_id = ${APPLICATION_ID}`);
    const broken = sqlite.pragma('foreign_key_check') as unknown[];
    if (broken.length > 0) throw new DatabaseVersionError(`A migration left ${broken.length} broken references; nothing was changed.`);
  });
  // SQLite's procedure for a table rebuild (drizzle-kit's way to change a column): foreign keys
  // off around the transaction (the pragma is ignored inside one), foreign_key_check before commit.
  const enforced = sqlite.pragma('foreign_keys', { simple: true }) === 1;
  sqlite.pragma('foreign_keys = OFF');
  try {
    run.immediate();
  } finally {
    if (enforced) sqlite.pragma('foreign_keys = ON');
  }
}

function tableExists(sqlite: Sqlite.Database, name: string): boolean {
  return sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}
