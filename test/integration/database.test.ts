import Sqlite from 'better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointInBackground, withFewerCheckpoints } from '../../server/platform/db/checkpoints.js';
import { applyMigrations, databaseFile, migrationsFolder, openDatabase } from '../../server/platform/db/open.js';
import { DatabaseVersionError } from '../../server/errors.js';
import { eventually } from '../helpers/eventually.js';
import { tempDir } from '../helpers/server.js';

const dirs: string[] = [];
function freshFile(): string {
  const dir = tempDir();
  dirs.push(dir);
  return databaseFile(dir);
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A new database file as the version before a migration left it (the first migration whose SQL
 * holds `marker`), still open as that version, for a test to fill before this version opens it.
 */
function databaseBefore(marker: string, options: { foreignKeys?: boolean } = {}): { file: string; old: Sqlite.Database } {
  const file = freshFile();
  const migrations = readMigrationFiles({ migrationsFolder: migrationsFolder() });
  const next = migrations.findIndex((m) => m.sql.some((s) => s.includes(marker)));
  expect(next).toBeGreaterThan(0);
  const old = new Sqlite(file);
  if (options.foreignKeys) old.pragma('foreign_keys = ON');
  applyMigrations(old, migrations.slice(0, next));
  return { file, old };
}

describe('SQLite store', () => {
  it('opens with WAL, foreign keys and a busy timeout, and applies the committed migrations', () => {
    const file = freshFile();
    const db = openDatabase(file);
    expect(db.sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.sqlite.pragma('busy_timeout', { simple: true })).toBe(5000);
    const tables = (db.sqlite.prepare(`SELECT name FROM sqlite_master WHERE type='table'`).all() as { name: string }[]).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['cabinets', 'users', 'api_keys', '__drizzle_migrations']));
    const applied = db.sqlite.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number };
    expect(applied.n).toBe(readMigrationFiles({ migrationsFolder: migrationsFolder() }).length);
    expect(() =>
      db.sqlite
        .prepare(
          `INSERT INTO users (id, cabinet_id, email, password_hash, role, created_at) VALUES ('u', 'no-such-cabinet', 'e', 'h', 'admin', 0)`,
        )
        .run(),
    ).toThrow(/FOREIGN KEY/);
    db.close();
  });

  it('reopening is a no-op and keeps the data', () => {
    const file = freshFile();
    const db = openDatabase(file);
    db.sqlite.prepare(`INSERT INTO cabinets (id, name, created_at) VALUES ('c1', 'Cabinet', 1)`).run();
    db.close();
    const again = openDatabase(file);
    expect(again.sqlite.prepare('SELECT name FROM cabinets').get()).toEqual({ name: 'Cabinet' });
    again.close();
  });

  it('migrates an older database forward', () => {
    const file = freshFile();
    const migrations = readMigrationFiles({ migrationsFolder: migrationsFolder() });
    const old = new Sqlite(file);
    // An "older version" that knew no migrations at all, then this version opens it.
    applyMigrations(old, []);
    old.close();
    const db = openDatabase(file);
    expect((db.sqlite.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n).toBe(migrations.length);
    db.close();
  });

  it('migrates a database holding quotes, PDFs and contracts through a table rebuild, keeping every row and reference', () => {
    const { file, old } = databaseBefore('__new_devis', { foreignKeys: true });
    old.exec(`
      INSERT INTO cabinets (id, name, created_at) VALUES ('c1', 'C', 1);
      INSERT INTO devis (id, cabinet_id, status, client_id, compagnie, produit, dic_data, created_at, updated_at, tarif_cents, pdf_sha256)
        VALUES ('d1', 'c1', 'signed', 'cl1', 'sandbox', 'auto', '{}', 1, 1, 1000, 'h');
      INSERT INTO devis_documents (devis_id, cabinet_id, pdf, sha256, created_at) VALUES ('d1', 'c1', x'25504446', 'h', 1);
      INSERT INTO contracts (id, cabinet_id, devis_id, client_id, compagnie, produit, premium_cents, signed_at, created_at)
        VALUES ('k1', 'c1', 'd1', 'cl1', 'sandbox', 'auto', 1000, 1, 1);
    `);
    old.close();
    const db = openDatabase(file);
    expect(db.sqlite.prepare('SELECT id, status, tarif_cents FROM devis').all()).toEqual([
      { id: 'd1', status: 'signed', tarif_cents: 1000 },
    ]);
    expect(db.sqlite.prepare('SELECT count(*) AS n FROM devis_documents').get()).toEqual({ n: 1 });
    expect(db.sqlite.prepare('SELECT devis_id FROM contracts').get()).toEqual({ devis_id: 'd1' });
    expect(db.sqlite.pragma('foreign_key_check')).toEqual([]);
    // The rebuilt table still enforces its references.
    expect(() =>
      db.sqlite
        .prepare(`INSERT INTO devis_documents (devis_id, cabinet_id, pdf, sha256, created_at) VALUES ('nope', 'c1', x'00', 'h', 1)`)
        .run(),
    ).toThrow(/FOREIGN KEY/);
    db.close();
  });

  it('migrates a database whose users, stored idempotency keys and console kill switch came from the previous version', () => {
    const { file, old } = databaseBefore('`caller` text NOT NULL');
    old.exec(`
      INSERT INTO cabinets (id, name, created_at) VALUES ('c1', 'C', 1);
      INSERT INTO users (id, cabinet_id, email, password_hash, role, created_at) VALUES ('u1', 'c1', 'a@example.fr', 'x', 'admin', 1);
      INSERT INTO idempotency_keys (cabinet_id, endpoint, key, request_hash, state, status_code, response_body, response_headers, locked_at, expires_at)
        VALUES ('c1', 'POST /api/v1/public/webhooks', 'k', 'h', 'done', 201, '{"secret":"whsec_oldSecretOfThePreviousVersion"}', '{}', 1, 9999999999999);
      INSERT INTO automation_settings (key, value, updated_at)
        VALUES ('robots_disabled', '{"reason":"Switched off from the console by a@example.fr.","since":"2026-11-20T10:00:00.000Z"}', 1);
    `);
    old.close();
    const db = openDatabase(file);
    expect(db.sqlite.prepare('SELECT email FROM users').all()).toEqual([{ email: 'a@example.fr' }]);
    // A key scoped to no API key could replay to any of them: not carried over (a 24-hour cache), and its secret goes with it,
    // out of the file too (secure_delete overwrites the dropped table's pages).
    expect(db.sqlite.prepare('SELECT count(*) AS n FROM idempotency_keys').get()).toEqual({ n: 0 });
    db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(file).includes(Buffer.from('whsec_oldSecretOfThePreviousVersion'))).toBe(false);
    // The install-wide switch stays on, but its reason no longer names a cabinet's admin: every cabinet sees it now.
    const killSwitch = JSON.parse(
      (db.sqlite.prepare(`SELECT value FROM automation_settings WHERE key = 'robots_disabled'`).get() as { value: string }).value,
    ) as { reason: string; since: string };
    expect(killSwitch.reason).not.toContain('a@example.fr');
    expect(killSwitch).toMatchObject({
      reason: expect.stringContaining('courtier robots enable') as string,
      since: '2026-11-20T10:00:00.000Z',
    });
    expect(db.sqlite.pragma('foreign_key_check')).toEqual([]);
    db.close();
  });

  it('numbers the jobs of the previous version per cabinet in creation order, for the hourly quota', () => {
    const { file, old } = databaseBefore('ADD `enqueue_number`');
    const job = old.prepare(
      `INSERT INTO jobs (id, cabinet_id, compagnie, produit, dic_data, request_hash, devis_id, status, progress_step, progress_percent, cost_credits, submitted, attempts, created_at, updated_at)
       VALUES (?, ?, 'sandbox', 'auto', '{}', 'h', 'd', 'completed', 'done', 100, 10, 0, 0, ?, ?)`,
    );
    old.exec(`INSERT INTO cabinets (id, name, created_at) VALUES ('c1', 'C1', 1), ('c2', 'C2', 1)`);
    for (const [id, cabinet, createdAt] of [
      ['j3', 'c1', 30],
      ['j1', 'c1', 10],
      ['k1', 'c2', 20],
      ['j2', 'c1', 20],
    ] as const)
      job.run(id, cabinet, createdAt, createdAt);
    old.close();
    const db = openDatabase(file);
    expect(db.sqlite.prepare('SELECT id, enqueue_number AS n FROM jobs ORDER BY cabinet_id, n').all()).toEqual([
      { id: 'j1', n: 1 },
      { id: 'j2', n: 2 },
      { id: 'j3', n: 3 },
      { id: 'k1', n: 1 },
    ]);
    db.close();
  });

  it('moves the job steps of the previous version into their job rows, in order; a job without steps keeps no timeline', () => {
    const { file, old } = databaseBefore('ADD `timeline`');
    const job = old.prepare(
      `INSERT INTO jobs (id, cabinet_id, compagnie, produit, dic_data, request_hash, devis_id, status, progress_step, progress_percent, cost_credits, submitted, attempts, created_at, updated_at)
       VALUES (?, ?, 'sandbox', 'auto', '{}', 'h', 'd', 'completed', 'done', 100, 10, 0, 0, 1, 1)`,
    );
    const step = old.prepare(`INSERT INTO job_steps (cabinet_id, job_id, status, step, percent, at) VALUES (?, ?, ?, ?, ?, ?)`);
    old.exec(`INSERT INTO cabinets (id, name, created_at) VALUES ('c1', 'C1', 1), ('c2', 'C2', 1)`);
    job.run('j1', 'c1');
    job.run('j2', 'c2');
    job.run('pulled', 'c1');
    step.run('c1', 'j1', 'pending', 'queued', 0, 10);
    step.run('c2', 'j2', 'pending', 'queued', 0, 15);
    step.run('c1', 'j1', 'running', 'queued', 0, 20);
    step.run('c1', 'j1', 'completed', 'done', 100, 30);
    old.close();
    const db = openDatabase(file);
    const timelines = db.sqlite.prepare('SELECT id, timeline FROM jobs ORDER BY id').all() as { id: string; timeline: string | null }[];
    expect(timelines.map(({ id, timeline }) => ({ id, steps: timeline === null ? null : (JSON.parse(timeline) as unknown) }))).toEqual([
      {
        id: 'j1',
        steps: [
          { status: 'pending', step: 'queued', percent: 0, at: 10 },
          { status: 'running', step: 'queued', percent: 0, at: 20 },
          { status: 'completed', step: 'done', percent: 100, at: 30 },
        ],
      },
      { id: 'j2', steps: [{ status: 'pending', step: 'queued', percent: 0, at: 15 }] },
      { id: 'pulled', steps: null },
    ]);
    expect(db.sqlite.prepare(`SELECT name FROM sqlite_master WHERE name = 'job_steps'`).get()).toBeUndefined();
    db.close();
  });

  it('refuses, untouched, a database written by a newer version', () => {
    const file = freshFile();
    openDatabase(file).close();
    const raw = new Sqlite(file);
    raw.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('a-migration-from-the-future', 9_999_999_999_999);
    raw.close();
    expect(() => openDatabase(file)).toThrow(DatabaseVersionError);
    expect(() => openDatabase(file)).toThrow(/newer version of Courtier/);
  });

  it('refuses a SQLite file that is not a Courtier database', () => {
    const file = freshFile();
    const other = new Sqlite(file);
    other.exec('CREATE TABLE something_else (x)');
    other.close();
    expect(() => openDatabase(file)).toThrow(/not a Courtier database/);
  });

  it('refuses a file that is not SQLite at all with an error, not a crash', () => {
    const dir = tempDir();
    dirs.push(dir);
    writeFileSync(join(dir, 'courtier.sqlite'), 'this is not a database'.repeat(100));
    expect(() => openDatabase(databaseFile(dir))).toThrow();
  });
});

describe('checkpoints from a worker thread (the service)', () => {
  const bytesOf = (file: string) => statSync(file).size;
  // 2,000 rows of 2 KB: ~1,000 pages, what SQLite's automatic checkpoint would copy inside a commit.
  const writeBulk = (db: ReturnType<typeof openDatabase>) => {
    db.sqlite.exec('CREATE TABLE bulk (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const insert = db.sqlite.prepare('INSERT INTO bulk (body) VALUES (?)');
    for (let i = 0; i < 2_000; i++) insert.run('x'.repeat(2_000));
  };

  it('turns off the checkpoint in commits, copies the WAL into the file from the worker, and removes the WAL on close', async () => {
    const file = freshFile();
    const db = openDatabase(file, { backgroundCheckpoints: { intervalMs: 10 } });
    expect(db.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = bytesOf(file);
    writeBulk(db);
    // Nothing on this connection copied the pages: they reach the file through the worker alone.
    await eventually(
      () => bytesOf(file),
      (size) => size > before + 3_000_000,
      'the worker to checkpoint the WAL into the database file',
    );
    db.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = openDatabase(file);
    expect(again.sqlite.prepare('SELECT count(*) AS n FROM bulk').get()).toEqual({ n: 2_000 });
    again.close();
  });

  it('keeps SQLite automatic checkpoint for the CLI', () => {
    const db = openDatabase(freshFile());
    expect(db.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    db.close();
  });

  it('lets a bulk download of the CLI write 64 MiB of WAL between checkpoints, then checkpoints as before, even when it fails; leaves the service’s worker alone', async () => {
    const cli = openDatabase(freshFile());
    const during: unknown[] = [];
    await withFewerCheckpoints(cli.sqlite, async () => {
      during.push(cli.sqlite.pragma('wal_autocheckpoint', { simple: true }));
      // 3 × 2,000 rows of 2 KB in as many commits: ~3,000 pages, three of SQLite's checkpoints by default.
      for (let round = 0; round < 3; round++) {
        if (round === 0) writeBulk(cli);
        else for (let i = 0; i < 2_000; i++) cli.sqlite.prepare('INSERT INTO bulk (body) VALUES (?)').run('y'.repeat(2_000));
      }
    });
    expect(during).toEqual([16_384]);
    // Every page is still in the WAL: no commit checkpointed.
    const [wal] = cli.sqlite.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
    expect(wal?.log).toBeGreaterThan(2_500);
    expect(cli.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await expect(withFewerCheckpoints(cli.sqlite, () => Promise.reject(new Error('hub gone')))).rejects.toThrow('hub gone');
    expect(cli.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    cli.close();

    const service = openDatabase(freshFile(), { backgroundCheckpoints: { intervalMs: 10 } });
    await withFewerCheckpoints(service.sqlite, async () => {
      expect(service.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    });
    expect(service.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    service.close();
  });

  it('falls back to checkpoints in commits, and says so, when the worker fails', async () => {
    const db = openDatabase(freshFile());
    const failures: Error[] = [];
    checkpointInBackground(db.sqlite, join(tempDir(), 'missing', 'courtier.sqlite'), { onFailure: (err) => failures.push(err) });
    expect(db.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await eventually(
      () => failures.length,
      (n) => n === 1,
      'the worker to fail on a missing file',
    );
    expect(failures[0]?.message).toMatch(/unable to open database file|directory does not exist/);
    expect(db.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    db.close();
  });
});
