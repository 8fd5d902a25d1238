/**
 * Tenant isolation of the key's own cabinet (GET /me) and the documents every caller gets alike (OpenAPI, docs page): B's key (with every scope) never sees, changes or reaches what is A's;
 * another cabinet's resource is 404 not_found, never 403. The checks are in meta.checks.ts, the two
 * cabinets in test/helpers/isolation.ts.
 */
import { describe } from 'vitest';
import { isolationTests, useIsolationWorld } from '../../helpers/isolation.js';
import { META_CHECKS } from './meta.checks.js';

useIsolationWorld();

describe('tenant isolation, for every route of the public API', () => {
  isolationTests(META_CHECKS);
});
