/**
 * The hub keeps each record's state and a bounded tail of changes. `join` of a cabinet with
 * 100,000 records and 1,000,000 changes of history against the join of the same records with no
 * history: goal <= 2x. A throwaway PostgreSQL with its durable defaults, the hub in a server child
 * as `courtier hub serve` runs it, the installs in this process (joinCabinet + downloadAll, as
 * `courtier sync join` runs them).
 *
 * The cabinet without history is uploaded by an install (connect, 100,000 opportunities of ~1.3 KB);
 * the cabinet with history is the same records copied in SQL, followed by 900,000 edits of one or
 * two fields each (generate_series), received 60 days ago, folded into its records' state by the
 * hub's own fold (seeding 900,000 edits through HTTP would take far longer than the run). The joins
 * alternate, two of each; then the cabinet with history is compacted with the default retention and
 * joined once more (for information).
 */
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { Benchmark } from './benchmark.js';
import { startServerChild } from './lib/child.js';
import { registerCleanup } from './lib/cleanup.js';
import { HUB_DATABASE_URL_ENV } from './lib/protocol.js';
import { formatTable } from './lib/report.js';
import { openInstall, RECORDS, seedOpportunities, type Install } from './sync.bench.js';
import { startTestPostgres } from '../test/helpers/postgres.js';
import { OPPORTUNITY_STAGES } from '../shared/crm.js';
import { MAX_RECORD_BYTES } from '../shared/sync-protocol.js';
import { CLI_ACTOR } from '../server/audit/service.js';
import { compactCabinet, DEFAULT_RETENTION } from '../server/hub/compaction.js';
import { connectHub } from '../server/hub/database.js';
import { hubDeps } from '../server/hub/deps.js';
import { createInvite } from '../server/hub/pairing.js';
import { foldIntoRecords } from '../server/hub/records.js';
import { syncedRecords } from '../server/sync/records.js';
import { connectCabinet, joinCabinet } from '../server/sync/service.js';
import { downloadAll, uploadQueue } from '../server/sync/transfer.js';
import { initCabinet } from '../server/tenancy/service.js';

const HISTORY = 1_000_000;
const GOAL_RATIO = 2;
const ROUNDS = 2;
const PASSWORD = 'correct horse battery staple';
const HISTORY_DEVICE = 'bench-history-device';
const fetchHub = (url: string, init: RequestInit) => globalThis.fetch(url, init);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * The cabinet `to`: the records of `from` as its creations, then edits up to HISTORY changes, each
 * setting an opportunity's expected value and stage, stamped after every creation; then its state.
 */
async function copyWithHistory(sql: postgres.Sql, from: string, to: string): Promise<void> {
  const long = new Date(Date.now() - 60 * 86_400_000).toISOString();
  await sql.begin(async (tx) => {
    await tx`INSERT INTO hub_cabinets (id, name, next_seq, highest_protocol, changes_count, created_at)
      SELECT ${to}, 'Cabinet avec historique', ${HISTORY + 1}, highest_protocol, ${HISTORY}, created_at FROM hub_cabinets WHERE id = ${from}`;
    await tx`INSERT INTO hub_devices (id, cabinet_id, name, credential_hash, last_number, created_at) VALUES (${HISTORY_DEVICE}, ${to}, 'historique', 'none', ${HISTORY}, ${long}::timestamptz)`;
    await tx`INSERT INTO hub_changes (cabinet_id, seq, device_id, number, kind, record_id, op, hlc, fields, bytes, received_at)
      SELECT ${to}, seq, ${HISTORY_DEVICE}, seq, kind, record_id, op, substr(hlc, 1, 23) || ${HISTORY_DEVICE}, fields, bytes, ${long}::timestamptz
      FROM hub_changes WHERE cabinet_id = ${from}`;
    await tx`
      WITH ids AS (SELECT record_id, seq - 1 AS i, hlc FROM hub_changes WHERE cabinet_id = ${to}),
      latest AS (SELECT max(substr(hlc, 1, 15)::bigint) AS t FROM ids)
      INSERT INTO hub_changes (cabinet_id, seq, device_id, number, kind, record_id, op, hlc, fields, bytes, received_at)
      SELECT ${to}, g, ${HISTORY_DEVICE}, g, 'opportunity', ids.record_id, 'upsert',
        lpad((latest.t + g)::text, 15, '0') || '-000000-' || ${HISTORY_DEVICE}, f.fields, octet_length(f.fields::text), ${long}::timestamptz + g * interval '1 ms'
      FROM generate_series(${RECORDS + 1}::bigint, ${HISTORY}::bigint) AS g
      JOIN ids ON ids.i = g % ${RECORDS}
      CROSS JOIN latest
      CROSS JOIN LATERAL (SELECT jsonb_build_object('expected_value_cents', g * 100, 'stage', (${[...OPPORTUNITY_STAGES]}::text[])[1 + g % ${OPPORTUNITY_STAGES.length}]) AS fields) f`;
    await foldIntoRecords(tx, to, 1, HISTORY, MAX_RECORD_BYTES);
  });
  await sql`VACUUM ANALYZE hub_changes`;
  await sql`VACUUM ANALYZE hub_records`;
}

/** `courtier sync join` of the cabinet into a fresh data dir: seconds, and how many opportunities it holds then. */
async function timedJoin(install: Install, hubUrl: string, code: string): Promise<{ seconds: number; opportunities: number }> {
  const started = performance.now();
  const joined = await joinCabinet(
    install.deps,
    { hubUrl, code, deviceName: 'B', email: 'b@example.fr', password: PASSWORD },
    { fetch: fetchHub },
    CLI_ACTOR,
  );
  await downloadAll(install.deps, syncedRecords(), joined.cabinet_id, fetchHub, () => undefined);
  const seconds = (performance.now() - started) / 1000;
  const opportunities =
    install.deps.db.sqlite
      .prepare<[string], number>('SELECT count(*) FROM opportunities WHERE cabinet_id = ?')
      .pluck()
      .get(joined.cabinet_id) ?? 0;
  install.close();
  return { seconds, opportunities };
}

const mean = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

export const benchmark: Benchmark = {
  name: 'sync-history',
  description: `join of ${int.format(RECORDS)} records with ${int.format(HISTORY)} changes of history vs the same records without, through a hub on a durable PostgreSQL`,
  async run(ctx) {
    const pg = await startTestPostgres({ durable: true });
    const unregisterPg = registerCleanup({ run: () => pg.stop(), runSync: () => undefined });
    const hubDatabaseUrl = await pg.createDatabase();
    process.env[HUB_DATABASE_URL_ENV] = hubDatabaseUrl;
    const hub = await startServerChild('hub', ctx.tempDir('hub'), ctx.child);
    const database = connectHub(hubDatabaseUrl, { max: 2 });
    const sql = postgres(hubDatabaseUrl, { max: 1, onnotice: () => undefined });
    try {
      const deps = hubDeps(database, 'bench');
      const invite = async (cabinetId: string) => (await createInvite(deps, { join: cabinetId })).code;
      const a = openInstall(ctx.tempDir('install-a'));
      const { cabinet_id: plain } = await initCabinet(a.deps, {
        cabinet: 'Cabinet sans historique',
        email: 'a@example.fr',
        password: PASSWORD,
      });
      seedOpportunities(a, plain);
      await connectCabinet(
        a.deps,
        { cabinetId: plain, hubUrl: hub.origin, code: (await createInvite(deps, { register: plain })).code, deviceName: 'A' },
        { fetch: fetchHub, records: syncedRecords() },
        CLI_ACTOR,
      );
      const uploaded = await uploadQueue(a.deps, syncedRecords(), plain, fetchHub, () => undefined);
      a.close();
      const withHistory = randomUUID();
      const seedStarted = performance.now();
      await copyWithHistory(sql, plain, withHistory);
      console.log(
        `   uploaded ${int.format(uploaded)} records; seeded the copy with ${int.format(HISTORY)} changes of history in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
      );

      const plainJoins: number[] = [];
      const historyJoins: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const [cabinetId, times] of [
          [plain, plainJoins],
          [withHistory, historyJoins],
        ] as const) {
          const joined = await timedJoin(
            openInstall(ctx.tempDir(`join-${round}-${times.length}-${cabinetId.slice(0, 8)}`)),
            hub.origin,
            await invite(cabinetId),
          );
          if (joined.opportunities !== RECORDS) throw new Error(`a join holds ${joined.opportunities} opportunities, not ${RECORDS}`);
          times.push(joined.seconds);
        }
      }
      const compactStarted = performance.now();
      const compacted = await compactCabinet(deps, withHistory, DEFAULT_RETENTION);
      const compactSeconds = (performance.now() - compactStarted) / 1000;
      const afterCompaction = await timedJoin(openInstall(ctx.tempDir('join-compacted')), hub.origin, await invite(withHistory));

      const ratio = mean(historyJoins) / mean(plainJoins);
      const met = ratio <= GOAL_RATIO;
      const seconds = (values: readonly number[]) => values.map((v) => v.toFixed(2)).join(', ');
      console.log(
        formatTable(
          ['join (joinCabinet + downloadAll)', 'changes on the hub', 'seconds per join'],
          [
            [`${int.format(RECORDS)} records, no history`, int.format(RECORDS), seconds(plainJoins)],
            [`${int.format(RECORDS)} records, history`, int.format(HISTORY), seconds(historyJoins)],
            [
              '   the same after compaction (default retention)',
              int.format(HISTORY - compacted.changes_deleted),
              afterCompaction.seconds.toFixed(2),
            ],
          ],
        ),
      );
      console.log(
        `   compaction: ${int.format(compacted.changes_deleted)} changes deleted in ${compactSeconds.toFixed(1)} s, in batches of one transaction each`,
      );
      console.log(
        `join with ${int.format(HISTORY)} changes of history / without: ${ratio.toFixed(2)}x (${mean(historyJoins).toFixed(1)} s vs ${mean(plainJoins).toFixed(1)} s; goal <= ${GOAL_RATIO}x) ${met ? 'goal met' : 'MISSED'}`,
      );
      return {
        goalMet: met,
        summary: `join with history ${ratio.toFixed(2)}x without (goal <= ${GOAL_RATIO}x): ${met ? 'goal met' : 'MISSED'}`,
      };
    } finally {
      delete process.env[HUB_DATABASE_URL_ENV];
      await sql.end();
      await database.close();
      await hub.stop();
      await pg.stop();
      unregisterPg();
    }
  },
};
