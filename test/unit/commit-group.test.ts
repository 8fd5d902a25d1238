import Sqlite from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCommitGroup, type CommitGroupOptions } from '../../server/platform/db/commit-group.js';
import { connectionTransactions } from '../../server/platform/db/transactions.js';
import { yieldsTo } from '../../server/platform/db/write-priority.js';
import { tempDir } from '../helpers/server.js';

/** Group commit (server/platform/db/commit-group.ts) on a real SQLite file, watched from a second connection. */
describe('commit group', () => {
  const opened: Sqlite.Database[] = [];
  afterEach(() => {
    for (const db of opened.splice(0)) db.close();
  });

  function setUp(options: CommitGroupOptions = {}) {
    const file = join(tempDir(), 'group.sqlite');
    const statements: string[] = [];
    const db = new Sqlite(file, { verbose: (sql) => statements.push(String(sql)) });
    db.pragma('journal_mode = WAL');
    db.exec(
      'CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE t (n INTEGER, parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)',
    );
    db.pragma('foreign_keys = ON');
    const other = new Sqlite(file, { readonly: true });
    opened.push(db, other);
    statements.length = 0;
    const insert = (n: number) => () => {
      db.prepare('INSERT INTO t (n) VALUES (?)').run(n);
      return n;
    };
    /** What another connection sees committed. */
    const committed = () => other.prepare('SELECT n FROM t ORDER BY n').pluck().all() as number[];
    const commits = () => statements.filter((sql) => /^COMMIT\b/.test(sql)).length;
    const transactions = connectionTransactions(db);
    return { db, transactions, group: createCommitGroup(db, transactions, options), insert, committed, commits, statements };
  }

  it('runs the work of one turn in one transaction, and answers each caller only once it is committed', async () => {
    const { group, insert, committed, commits } = setUp();
    const seenAtAnswer: number[][] = [];
    const answers = [1, 2, 3].map((n) =>
      group.run(insert(n)).then((value) => {
        seenAtAnswer.push(committed());
        return value;
      }),
    );
    expect(committed()).toEqual([]);
    expect(await Promise.all(answers)).toEqual([1, 2, 3]);
    expect(seenAtAnswer).toEqual([
      [1, 2, 3],
      [1, 2, 3],
      [1, 2, 3],
    ]);
    expect(commits()).toBe(1);
  });

  it('alone, the work is its own transaction: no savepoint, no extra statement', async () => {
    const { group, insert, statements } = setUp();
    await group.run(insert(7));
    expect(statements).toEqual(['BEGIN IMMEDIATE', 'INSERT INTO t (n) VALUES (7.0)', 'COMMIT']);
  });

  it('undoes only what failing work wrote: it rejects with its own error, the others commit', async () => {
    const { db, group, insert, committed, commits } = setUp();
    const first = group.run(insert(1));
    const failing = group.run(() => {
      insert(2)();
      throw new Error('refused by the handler');
    });
    const last = group.run(insert(3));
    await expect(failing).rejects.toThrow('refused by the handler');
    expect(await Promise.all([first, last])).toEqual([1, 3]);
    expect(committed()).toEqual([1, 3]);
    expect(commits()).toBe(1);
    expect(db.inTransaction).toBe(false);
  });

  it('the first member runs without a savepoint, each other one in its own', async () => {
    const { group, insert, statements } = setUp();
    await Promise.all([group.run(insert(1)), group.run(insert(2))]);
    expect(statements.map((sql) => sql.split(' ')[0])).toEqual(['BEGIN', 'INSERT', 'SAVEPOINT', 'INSERT', 'RELEASE', 'COMMIT']);
  });

  it('failing first work is rolled back with its transaction, which held nothing else: the others commit in the next one', async () => {
    const { db, group, insert, committed, commits } = setUp();
    const failing = group.run(() => {
      insert(2)();
      throw new Error('refused by the handler');
    });
    const others = [group.run(insert(1)), group.run(insert(3))];
    await expect(failing).rejects.toThrow('refused by the handler');
    expect(await Promise.all(others)).toEqual([1, 3]);
    expect(committed()).toEqual([1, 3]);
    expect(commits()).toBe(1);
    expect(db.inTransaction).toBe(false);
  });

  it('alone, failing work is rolled back whole', async () => {
    const { group, insert, committed } = setUp();
    await expect(
      group.run(() => {
        insert(1)();
        throw new Error('alone and refused');
      }),
    ).rejects.toThrow('alone and refused');
    expect(committed()).toEqual([]);
  });

  it('when work ends the transaction itself, it and the members before it are refused, nothing of theirs is written, and the rest commit next', async () => {
    const { db, group, insert, committed } = setUp();
    const first = group.run(insert(1));
    const ender = group.run(() => db.exec('ROLLBACK'));
    const after = group.run(insert(3));
    const outcomes = await Promise.allSettled([first, ender, after]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(committed()).toEqual([3]);
    expect(db.inTransaction).toBe(false);
  });

  it('when BEGIN fails (another connection holds the write lock), the members hear why and the next turn works', async () => {
    const { db, group, insert, committed } = setUp();
    db.pragma('busy_timeout = 0');
    const holder = new Sqlite(db.name);
    opened.push(holder);
    holder.exec('BEGIN IMMEDIATE');
    const outcomes = await Promise.allSettled([group.run(insert(1)), group.run(insert(2))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    for (const outcome of outcomes) if (outcome.status === 'rejected') expect(String(outcome.reason)).toMatch(/locked|busy/i);
    holder.exec('ROLLBACK');
    expect(await group.run(insert(4))).toBe(4);
    expect(committed()).toEqual([4]);
  });

  it('when the COMMIT fails (a deferred foreign key), every member is refused and nothing is written', async () => {
    const { db, group, insert, committed } = setUp();
    const members = [
      group.run(insert(1)),
      group.run(() => db.prepare('INSERT INTO t (n, parent) VALUES (2, 999)').run()),
      group.run(insert(3)),
    ];
    const outcomes = await Promise.allSettled(members);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      if (outcome.status === 'rejected') expect(String(outcome.reason)).toMatch(/FOREIGN KEY/);
    }
    expect(committed()).toEqual([]);
    expect(db.inTransaction).toBe(false);
  });

  it('takes at most maxSize members per transaction; the rest commit in the next one', async () => {
    const { group, insert, committed, commits } = setUp({ maxSize: 2 });
    expect(await Promise.all([1, 2, 3, 4, 5].map((n) => group.run(insert(n))))).toEqual([1, 2, 3, 4, 5]);
    expect(committed()).toEqual([1, 2, 3, 4, 5]);
    expect(commits()).toBe(3);
  });

  it('work that joins from inside a flush commits in the same transaction (a finished job and the claim it frees a slot for)', async () => {
    const { group, insert, committed, commits } = setUp();
    let inner: Promise<number> | undefined;
    const outer = group.run(() => {
      inner = group.run(insert(2));
      return insert(1)();
    });
    expect(await outer).toBe(1);
    expect(await inner).toBe(2);
    expect(committed()).toEqual([1, 2]);
    expect(commits()).toBe(1);
  });

  it('a lone member that throws after work joined it is undone alone; the joined work commits next', async () => {
    const { group, insert, committed } = setUp();
    let inner: Promise<number> | undefined;
    const outer = group.run(() => {
      inner = group.run(insert(2));
      insert(1)();
      throw new Error('refused after asking for more');
    });
    await expect(outer).rejects.toThrow('refused after asking for more');
    expect(await inner).toBe(2);
    expect(committed()).toEqual([2]);
  });

  it('raises the API write priority for its transactions, even when the connection was prioritized after the group was made', async () => {
    const { transactions, group } = setUp();
    const apiWriting = yieldsTo(transactions.prioritizeWrites().buffer);
    const seen = await Promise.all([group.run(apiWriting), group.run(apiWriting)]);
    expect(seen).toEqual([true, true]);
    expect(apiWriting()).toBe(false);
  });
});
