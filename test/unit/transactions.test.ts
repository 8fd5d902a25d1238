import Sqlite from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionTransactions } from '../../server/platform/db/transactions.js';
import { yieldsTo } from '../../server/platform/db/write-priority.js';
import { tempDir } from '../helpers/server.js';

/** server/platform/db/transactions.ts on a real SQLite file: better-sqlite3's semantics, built once, and the write priority. */
describe("a connection's transactions", () => {
  let sqlite: Sqlite.Database | undefined;
  afterEach(() => sqlite?.close());

  function setUp() {
    const statements: string[] = [];
    sqlite = new Sqlite(join(tempDir(), 'transactions.sqlite'), { verbose: (sql) => statements.push(String(sql)) });
    sqlite.exec('CREATE TABLE t (n INTEGER)');
    const db = sqlite;
    const insert = (n: number) => db.prepare('INSERT INTO t (n) VALUES (?)').run(n);
    const rows = () => db.prepare('SELECT n FROM t ORDER BY n').pluck().all();
    statements.length = 0;
    return { sqlite: db, transactions: connectionTransactions(db), statements, insert, rows };
  }

  it('runs work in a transaction, deferred or immediate, and returns what it returned', () => {
    const { transactions, statements, insert, rows } = setUp();
    expect(transactions.transaction(() => (insert(1), 'one'))).toBe('one');
    expect(transactions.immediateTransaction(() => (insert(2), 'two'))).toBe('two');
    expect(statements.filter((sql) => !sql.startsWith('INSERT'))).toEqual(['BEGIN', 'COMMIT', 'BEGIN IMMEDIATE', 'COMMIT']);
    expect(rows()).toEqual([1, 2]);
  });

  it('undoes all of the work when it throws, and nests a savepoint undone alone inside an open transaction', () => {
    const { sqlite, transactions, statements, insert, rows } = setUp();
    expect(() =>
      transactions.immediateTransaction(() => {
        insert(1);
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect(sqlite.inTransaction).toBe(false);
    statements.length = 0;
    transactions.immediateTransaction(() => {
      insert(2);
      expect(() =>
        transactions.transaction(() => {
          insert(3);
          throw new Error('inner refused');
        }),
      ).toThrow('inner refused');
      transactions.transaction(() => insert(4));
    });
    expect(statements.filter((sql) => !sql.startsWith('INSERT'))).toEqual([
      'BEGIN IMMEDIATE',
      'SAVEPOINT `\t_bs3.\t`',
      'ROLLBACK TO `\t_bs3.\t`',
      'RELEASE `\t_bs3.\t`',
      'SAVEPOINT `\t_bs3.\t`',
      'RELEASE `\t_bs3.\t`',
      'COMMIT',
    ]);
    expect(rows()).toEqual([2, 4]);
  });

  it("builds better-sqlite3's transaction functions once, not per call", () => {
    const { sqlite, transactions, insert } = setUp();
    const built: unknown[] = [];
    const original = sqlite.transaction.bind(sqlite);
    sqlite.transaction = ((fn) => (built.push(fn), original(fn))) as Sqlite.Database['transaction'];
    for (let n = 0; n < 5; n++) transactions.transaction(() => insert(n));
    transactions.immediateTransaction(() => transactions.transaction(() => insert(5)));
    expect(built).toEqual([]);
  });

  it('raises the write priority for the length of every transaction once prioritized, nested or thrown, and lowers it after', () => {
    const { transactions, insert, rows } = setUp();
    const notYet = transactions.transaction(() => insert(0));
    expect(notYet.changes).toBe(1);
    const priority = transactions.prioritizeWrites();
    expect(transactions.prioritizeWrites().buffer).toBe(priority.buffer);
    const apiWriting = yieldsTo(priority.buffer);
    const view = new Int32Array(priority.buffer);
    expect(apiWriting()).toBe(false);
    const seen = transactions.immediateTransaction(() => {
      const outer = Atomics.load(view, 0);
      const inner = transactions.transaction(() => Atomics.load(view, 0));
      return [outer, inner, apiWriting(), transactions.transaction(() => apiWriting())];
    });
    expect(seen).toEqual([1, 2, true, true]);
    expect(apiWriting()).toBe(false);
    expect(() =>
      transactions.transaction(() => {
        insert(1);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(apiWriting()).toBe(false);
    expect(rows()).toEqual([0]);
  });
});
