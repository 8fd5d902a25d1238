// @module-tag postgres
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../server/paths.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

const run = promisify(execFile);
const FIXTURE = join(packageRoot(), 'test', 'fixtures', 'postgres-backend-dies.mjs');

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
});
afterAll(async () => pg.stop());

describe('the hub’s PostgreSQL driver, as installed (scripts/patch-postgres.mjs)', () => {
  it('a connection whose backend died rejects the next query with CONNECTION_CLOSED instead of crashing the process (porsager/postgres#1208)', async () => {
    // In a child process: unpatched, the driver throws from a setImmediate and the process dies.
    const { stdout } = await run(process.execPath, [FIXTURE, pg.url], { timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual({ outcome: 'rejected', code: 'CONNECTION_CLOSED' });
  });
});
