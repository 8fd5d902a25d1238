import { afterAll, beforeAll } from 'vitest';
import { startListeningHub, type ListeningHub } from './hub-server.js';
import { startTestPostgres, type TestPostgres } from './postgres.js';

/** What a test file reads once its hub is up; reading it before beforeAll ran throws. */
export interface HubFixture {
  readonly pg: TestPostgres;
  readonly hub: ListeningHub;
}

/**
 * A throwaway PostgreSQL cluster and a hub listening over it, for the whole test file: started
 * before its first test, stopped after its last (after the file's own afterAll hooks, which
 * vitest runs first, so that installs close before their hub).
 */
export function useListeningHub(options: Parameters<typeof startListeningHub>[1] = {}): HubFixture {
  let pg: TestPostgres | undefined;
  let hub: ListeningHub | undefined;
  beforeAll(async () => {
    pg = await startTestPostgres();
    hub = await startListeningHub(await pg.createDatabase(), options);
  }, 60_000);
  afterAll(async () => {
    await hub?.close();
    await pg?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the hub is started in beforeAll: read it inside a test or a hook');
    return value;
  };
  return {
    get pg() {
      return started(pg);
    },
    get hub() {
      return started(hub);
    },
  };
}
