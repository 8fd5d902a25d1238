/**
 * Tenant isolation of pricing: products, tarification jobs, MFA, artifacts, the wallet and the quota: B's key (with every scope) never sees, changes or reaches what is A's;
 * another cabinet's resource is 404 not_found, never 403. The checks are in automation.checks.ts, the two
 * cabinets in test/helpers/isolation.ts.
 */
import { describe } from 'vitest';
import { isolationTests, useIsolationWorld } from '../../helpers/isolation.js';
import { AUTOMATION_CHECKS } from './automation.checks.js';

useIsolationWorld();

describe('tenant isolation, for every route of the public API', () => {
  isolationTests(AUTOMATION_CHECKS);
});
