/**
 * Tenant isolation of the CRM routes: opportunities and clients: B's key (with every scope) never sees, changes or reaches what is A's;
 * another cabinet's resource is 404 not_found, never 403. The checks are in crm.checks.ts, the two
 * cabinets in test/helpers/isolation.ts.
 */
import { describe } from 'vitest';
import { isolationTests, useIsolationWorld } from '../../helpers/isolation.js';
import { CRM_CHECKS } from './crm.checks.js';

useIsolationWorld();

describe('tenant isolation, for every route of the public API', () => {
  isolationTests(CRM_CHECKS);
});
