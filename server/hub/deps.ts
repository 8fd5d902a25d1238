import { randomBytes as nodeRandomBytes } from 'node:crypto';
import type { Sql } from 'postgres';
import type { Clock } from '../deps.js';
import type { HubDatabase, HubDb } from './database.js';

/**
 * What the hub's services need from outside. Not the agent's Deps: the hub has no data dir, no
 * server secret and no SQLite. Tests inject the clock (codes expire without sleeping).
 */
export interface HubDeps {
  sql: Sql;
  db: HubDb;
  clock: Clock;
  randomBytes: (size: number) => Buffer;
  /** This build's version, for /healthz and the OpenAPI document. */
  version: string;
}

export function hubDeps(database: Pick<HubDatabase, 'sql' | 'db'>, version: string, overrides: Partial<Pick<HubDeps, 'clock' | 'randomBytes'>> = {}): HubDeps {
  return {
    sql: database.sql,
    db: database.db,
    clock: overrides.clock ?? { now: () => Date.now() },
    randomBytes: overrides.randomBytes ?? nodeRandomBytes,
    version,
  };
}

/** The hub's time as the bodies carry it. */
export function hubTime(deps: Pick<HubDeps, 'clock'>): string {
  return new Date(deps.clock.now()).toISOString();
}
