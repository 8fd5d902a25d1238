import Sqlite from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prioritizeTransactions, yieldsTo } from '../../server/db/write-priority.js';
import { tempDir } from '../helpers/server.js';

/** The flag the webhook dispatcher's thread reads before it takes SQLite's write lock (see write-priority.ts). */
describe('write priority of the API connection', () => {
  let sqlite: Sqlite.Database | undefined;
  afterEach(() => sqlite?.close());

  function prioritized() {
    sqlite = new Sqlite(join(tempDir(), 'priority.sqlite'));
    sqlite.exec('CREATE TABLE t (n INTEGER)');
    const priority = prioritizeTransactions(sqlite);
    return { db: sqlite, apiWriting: yieldsTo(priority.buffer) };
  }

  it('is raised for the length of every transaction, whichever variant, and lowered after it', () => {
    const { db, apiWriting } = prioritized();
    const seen: boolean[] = [];
    const insert = db.transaction((n: number) => {
      seen.push(apiWriting());
      db.prepare('INSERT INTO t (n) VALUES (?)').run(n);
      return n;
    });
    expect(apiWriting()).toBe(false);
    expect([insert(1), insert.immediate(2), insert.deferred(3), insert.exclusive(4), insert.default(5)]).toEqual([1, 2, 3, 4, 5]);
    expect(seen).toEqual([true, true, true, true, true]);
    expect(apiWriting()).toBe(false);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 5 });
  });

  it('stays raised through a nested transaction and is lowered when one throws', () => {
    const { db, apiWriting } = prioritized();
    const inner = db.transaction(() => apiWriting());
    const outer = db.transaction(() => {
      const during = inner();
      return { during, after: apiWriting() };
    });
    expect(outer.immediate()).toEqual({ during: true, after: true });
    const failing = db.transaction(() => {
      db.prepare('INSERT INTO t (n) VALUES (1)').run();
      throw new Error('rolled back');
    });
    expect(() => failing.immediate()).toThrow('rolled back');
    expect(apiWriting()).toBe(false);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
  });

  it('is read through the shared memory, as the other thread reads it', () => {
    const { db } = prioritized();
    const priority = prioritizeTransactions(db);
    const view = new Int32Array(priority.buffer);
    let during = -1;
    db.transaction(() => {
      during = Atomics.load(view, 0);
    })();
    expect(during).toBeGreaterThan(0);
    expect(Atomics.load(view, 0)).toBe(0);
  });
});
