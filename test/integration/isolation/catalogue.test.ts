/**
 * Every route of the public catalogue has its tenant isolation check, in the file of its module
 * (test/integration/isolation/*.checks.ts): a route added to the catalogue without one fails here.
 */
import { describe, expect, it } from 'vitest';
import { PUBLIC_ENDPOINTS } from '../../../shared/catalogue.js';
import { AUTOMATION_CHECKS } from './automation.checks.js';
import { CRM_CHECKS } from './crm.checks.js';
import { DEVIS_CHECKS } from './devis.checks.js';
import { META_CHECKS } from './meta.checks.js';
import { WEBHOOK_CHECKS } from './webhooks.checks.js';

const TABLES = [META_CHECKS, CRM_CHECKS, DEVIS_CHECKS, WEBHOOK_CHECKS, AUTOMATION_CHECKS];

describe('tenant isolation, for every route of the public API', () => {
  it('every operationId of the catalogue has an isolation check, and no check is for a route that does not exist', () => {
    const catalogue = PUBLIC_ENDPOINTS.map((e) => e.operationId).sort();
    const ISOLATION_CHECKS = Object.assign({}, ...TABLES) as Record<string, unknown>;
    // No operationId is checked in two files (merged, one would hide the other).
    expect(Object.keys(ISOLATION_CHECKS)).toHaveLength(TABLES.reduce((n, table) => n + Object.keys(table).length, 0));
    expect(Object.keys(ISOLATION_CHECKS).sort()).toEqual(catalogue);
  });
});
