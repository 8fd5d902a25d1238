/**
 * Tenant isolation of the quotes (devis): references, lists, reads, signature and PDFs: B's key (with every scope) never sees, changes or reaches what is A's;
 * another cabinet's resource is 404 not_found, never 403. The checks are in devis.checks.ts, the two
 * cabinets in test/helpers/isolation.ts.
 */
import { describe } from 'vitest';
import { isolationTests, useIsolationWorld } from '../../helpers/isolation.js';
import { DEVIS_CHECKS } from './devis.checks.js';

useIsolationWorld();

describe('tenant isolation, for every route of the public API', () => {
  isolationTests(DEVIS_CHECKS);
});
