/**
 * Tenant isolation of the webhook subscriptions and their deliveries: B's key (with every scope) never sees, changes or reaches what is A's;
 * another cabinet's resource is 404 not_found, never 403. The checks are in webhooks.checks.ts, the two
 * cabinets in test/helpers/isolation.ts.
 */
import { describe, it } from 'vitest';
import { isolationTests, useIsolationWorld, expectDeliveriesInTheirCabinets, expectNothingOfAUnderB } from '../../helpers/isolation.js';
import { WEBHOOK_CHECKS } from './webhooks.checks.js';

useIsolationWorld();

describe('tenant isolation, for every route of the public API', () => {
  isolationTests(WEBHOOK_CHECKS);

  // Over the whole database, after this file's checks (every file sweeps again after its last test: see useIsolationWorld).
  it("B's events outbox holds none of A's events, and the database holds nothing of A's under B", () => {
    expectNothingOfAUnderB();
  });

  it("every webhook delivery stays in its event's cabinet, in SQLite and on the wire; B's endpoints never got A's events", async () => {
    await expectDeliveriesInTheirCabinets();
  });
});
