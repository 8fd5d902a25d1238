import Sqlite from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { atomically } from '../../server/platform/db/atomically.js';
import { connectionTransactions } from '../../server/platform/db/transactions.js';
import { tempDir } from '../helpers/server.js';

/** server/platform/db/atomically.ts on a real SQLite file. */
describe('atomically', () => {
  const opened: Sqlite.Database[] = [];
  afterEach(() => {
    for (const db of opened.splice(0)) db.close();
  });

  function setUp() {
    const statements: string[] = [];
    const db = new Sqlite(join(tempDir(), 'atomically.sqlite'), { verbose: (sql) => statements.push(String(sql)) });
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (n INTEGER)');
    opened.push(db);
    statements.length = 0;
    const insert = (n: number) => db.prepare('INSERT INTO t (n) VALUES (?)').run(n);
    const rows = () => db.prepare('SELECT n FROM t ORDER BY n').pluck().all();
    return { db: { sqlite: db, ...connectionTransactions(db) }, statements, insert, rows };
  }

  it('outside a transaction, runs in an IMMEDIATE one of its own, undone whole when the work throws', () => {
    const { db, statements, insert, rows } = setUp();
    expect(atomically(db, () => (insert(1), 'done'))).toBe('done');
    expect(statements).toEqual(['BEGIN IMMEDIATE', 'INSERT INTO t (n) VALUES (1.0)', 'COMMIT']);
    expect(() =>
      atomically(db, () => {
        insert(2);
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect(rows()).toEqual([1]);
    expect(db.sqlite.inTransaction).toBe(false);
  });

  it("inside a transaction, adds no savepoint: the caller's commit or rollback covers the work", () => {
    const { db, statements, insert, rows } = setUp();
    db.immediateTransaction(() => atomically(db, () => insert(1)));
    expect(statements).toEqual(['BEGIN IMMEDIATE', 'INSERT INTO t (n) VALUES (1.0)', 'COMMIT']);
    expect(() =>
      db.immediateTransaction(() => {
        atomically(db, () => insert(2));
        throw new Error('the caller refuses');
      }),
    ).toThrow('the caller refuses');
    expect(rows()).toEqual([1]);
  });
});
