import type { Deps } from '../deps.js';
import * as store from './store.js';
import * as guardStore from './store-guards.js';

/**
 * What a job's end says of the cabinet's login at its insurer, kept as its last login test so that
 * the Insurers page says it: the robot priced (the login works), or the portal refused the login. A
 * test key's job logs in with the demo account, not the cabinet's: it says nothing of it.
 */
export function recordLoginFromJob(
  deps: Pick<Deps, 'db' | 'clock'>,
  row: store.JobRow,
  outcome: { ok: true } | { ok: false; code: string; message: string },
): void {
  if (row.environment !== 'prod') return;
  const askedCode = store.jobTimeline(row).some((step) => step.status === 'mfa_required' || step.status === 'awaiting_mfa');
  guardStore.saveLoginTest(deps.db.orm, {
    cabinetId: row.cabinetId,
    compagnie: row.robotCompagnie,
    ok: outcome.ok,
    mfaRequired: outcome.ok && askedCode,
    code: outcome.ok ? null : outcome.code,
    message: outcome.ok ? null : outcome.message,
    testedAt: deps.clock.now(),
  });
}
