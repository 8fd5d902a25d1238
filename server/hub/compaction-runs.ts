import type { FastifyBaseLogger } from 'fastify';
import { recordHubAudit, type HubAuditActor } from './audit.js';
import { compactHub, type CompactionSummary, type Retention } from './compaction.js';
import type { HubDeps } from './deps.js';

/** Who compacts on its own: `courtier hub serve`'s periodic run. */
const COMPACTION_ACTOR: HubAuditActor = { kind: 'system', id: null, label: 'hub serve (periodic compaction)', address: null };

/**
 * Compacts (every cabinet, or the one named) and records it in the hub's audit log: each cabinet the
 * operator compacted, and each cabinet a periodic run took something from (an hourly entry per
 * cabinet that lost nothing would drown the log).
 */
export async function compactAndAudit(
  deps: Pick<HubDeps, 'sql' | 'clock'>,
  retention: Retention,
  actor: HubAuditActor,
  cabinetId?: string,
): Promise<CompactionSummary[]> {
  const summaries = await compactHub(deps, retention, cabinetId);
  for (const { cabinet_id: cabinet, ...details } of summaries) {
    if (actor.kind === 'system' && details.changes_deleted + details.blobs_deleted === 0) continue;
    await recordHubAudit(deps, {
      action: 'hub.compacted',
      actor,
      cabinetId: cabinet,
      details: { ...details, retain_days: retention.days, retain_changes: retention.changes },
    });
  }
  return summaries;
}

/**
 * Compacts every `everyMs` until stopped (the first run one period after the start, so that hub
 * processes started together do not all compact at once); a run that fails is logged and the next
 * one tries again. stop() waits for a run in progress.
 */
export function startCompaction(
  deps: Pick<HubDeps, 'sql' | 'clock'>,
  retention: Retention,
  everyMs: number,
  log: Pick<FastifyBaseLogger, 'error'>,
): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped || everyMs <= 0) return;
    timer = setTimeout(run, everyMs);
    timer.unref();
  };
  const run = () => {
    running = compactAndAudit(deps, retention, COMPACTION_ACTOR)
      .then(
        () => undefined,
        (err: unknown) => log.error({ err }, 'hub: compaction failed; it runs again at the next period'),
      )
      .finally(schedule);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
