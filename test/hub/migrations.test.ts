// @module-tag postgres
import { readMigrationFiles } from 'drizzle-orm/migrator';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHub, hubMigrationsFolder, migrateHub, openHubDatabase } from '../../server/hub/database.js';
import { DatabaseVersionError } from '../../server/errors.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
});
afterAll(() => pg.stop());

const migrations = readMigrationFiles({ migrationsFolder: hubMigrationsFolder() });

async function tablesOf(url: string): Promise<string[]> {
  const sql = postgres(url, { max: 1 });
  try {
    const rows = await sql<
      { name: string }[]
    >`SELECT schemaname || '.' || tablename AS name FROM pg_tables WHERE schemaname IN ('public', 'drizzle') ORDER BY 1`;
    return rows.map((r) => r.name);
  } finally {
    await sql.end();
  }
}

describe('hub migrations', () => {
  it('are applied once when several hub processes start together, each on its own connection', async () => {
    const url = await pg.createDatabase();
    const runners = Array.from({ length: 4 }, () => connectHub(url, { max: 1 }));
    try {
      const results = await Promise.all(runners.map((r) => migrateHub(r.sql)));
      expect(results.map((r) => r.applied).sort()).toEqual([0, 0, 0, migrations.length]);
      const [first] = runners;
      const recorded = await first!.sql<{ hash: string }[]>`SELECT hash FROM drizzle.__drizzle_migrations ORDER BY id`;
      expect(recorded.map((r) => r.hash)).toEqual(migrations.map((m) => m.hash));
      expect(await tablesOf(url)).toEqual([
        'drizzle.__drizzle_migrations',
        'public.hub_audit_events',
        'public.hub_blobs',
        'public.hub_cabinets',
        'public.hub_changes',
        'public.hub_devices',
        'public.hub_erasure_links',
        'public.hub_invites',
        'public.hub_pairing_failures',
        'public.hub_records',
        'public.hub_wallet_entries',
      ]);
      // Run again (a restart): nothing to do, nothing fails.
      expect(await migrateHub(first!.sql)).toEqual({ applied: 0 });
    } finally {
      await Promise.all(runners.map((r) => r.close()));
    }
  });

  it('refuse a database that records a migration this build does not know, changing nothing', async () => {
    const url = await pg.createDatabase();
    const hub = connectHub(url, { max: 1 });
    try {
      await migrateHub(hub.sql);
      await hub.sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-a-newer-courtier', 9999999999999)`;
      const before = await tablesOf(url);
      await expect(migrateHub(hub.sql)).rejects.toThrow(DatabaseVersionError);
      await expect(migrateHub(hub.sql)).rejects.toThrow(
        `newer version of Courtier (${migrations.length + 1} schema migrations; this version knows ${migrations.length})`,
      );
      expect(await tablesOf(url)).toEqual(before);
    } finally {
      await hub.close();
    }
  });

  it('refuse a database that holds someone else’s tables', async () => {
    const url = await pg.createDatabase();
    const hub = connectHub(url, { max: 1 });
    try {
      await hub.sql`CREATE TABLE invoices (id int)`;
      await expect(migrateHub(hub.sql)).rejects.toThrow(/not a Courtier hub’s/);
      expect(await tablesOf(url)).toEqual(['public.invoices']);
    } finally {
      await hub.close();
    }
  });

  it('are followed by a check that the hub’s role may create temporary tables, where it stages large uploads: refused with the GRANT to run', async () => {
    const url = await pg.createDatabase();
    const name = new URL(url).pathname.slice(1);
    const admin = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      await admin.unsafe(
        `CREATE ROLE hub_without_temp LOGIN; ALTER DATABASE ${name} OWNER TO hub_without_temp; REVOKE TEMPORARY ON DATABASE ${name} FROM PUBLIC, hub_without_temp`,
      );
      const asRole = Object.assign(new URL(url), { username: 'hub_without_temp' }).toString();
      await expect(openHubDatabase(asRole)).rejects.toThrow(
        `may not create temporary tables in ${name}, where the hub stages large uploads: GRANT TEMPORARY ON DATABASE ${name} TO hub_without_temp`,
      );
      await admin.unsafe(`GRANT TEMPORARY ON DATABASE ${name} TO hub_without_temp`);
      const opened = await openHubDatabase(asRole);
      await opened.close();
    } finally {
      await admin.end();
    }
  });

  it('apply a later migration on top of the recorded ones', async () => {
    const url = await pg.createDatabase();
    const hub = connectHub(url, { max: 1 });
    try {
      await migrateHub(hub.sql);
      const next = { sql: ['CREATE TABLE hub_later (id int)'], bps: true, folderMillis: Date.now(), hash: 'later' };
      expect(await migrateHub(hub.sql, [...migrations, next])).toEqual({ applied: 1 });
      expect(await tablesOf(url)).toContain('public.hub_later');
      // The older build now refuses the database: it does not know the later migration.
      await expect(migrateHub(hub.sql)).rejects.toThrow(DatabaseVersionError);
    } finally {
      await hub.close();
    }
  });
});
