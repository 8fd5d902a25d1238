import { z } from 'zod';
import {
  comparisonDryRunSchema,
  createComparison,
  createConseil,
  getComparison,
  getConseilPdf,
  getRiskSchema,
  listComparisons,
  listConseils,
} from './comparaisons.js';
import { consoleTwin, defineEndpoint } from './endpoint.js';

/**
 * The Compare page's routes: the REST API's comparisons and advice documents offered to a console
 * session, on English paths, priced with the cabinet's own insurer logins (as the Pricing page).
 */

const TAG = 'Console: comparisons';
const twin = { tag: TAG, auth: 'console' } as const;

export const getConsoleRiskSchema = defineEndpoint({
  ...consoleTwin(getRiskSchema, { ...twin, operationId: 'consoleGetRiskSchema' }),
  path: '/risks/{ligne}/schema',
});

/** A comparison's dry run, with the balance the Compare page shows beside its cost. */
const consoleComparisonDryRunSchema = comparisonDryRunSchema
  .extend({ balance: z.int().describe('Credits in the wallet now.') })
  .meta({ id: 'ConsoleComparisonDryRun' });
export type ConsoleComparisonDryRun = z.infer<typeof consoleComparisonDryRunSchema>;

export const createConsoleComparison = defineEndpoint({
  ...consoleTwin(createComparison, { ...twin, operationId: 'consoleCreateComparison' }),
  path: '/comparisons',
  responses: {
    200: { description: 'Dry run: what would run, and the balance.', schema: consoleComparisonDryRunSchema },
    202: createComparison.responses[202],
  },
});

export const getConsoleComparison = defineEndpoint({
  ...consoleTwin(getComparison, { ...twin, operationId: 'consoleGetComparison' }),
  path: '/comparisons/{comparaison_id}',
});

export const listConsoleComparisons = defineEndpoint({
  ...consoleTwin(listComparisons, { ...twin, operationId: 'consoleListComparisons' }),
  path: '/comparisons',
});

export const createConsoleConseil = defineEndpoint({
  ...consoleTwin(createConseil, { ...twin, operationId: 'consoleCreateConseil' }),
  path: '/comparisons/{comparaison_id}/advice',
});

export const getConsoleConseilPdf = defineEndpoint({
  ...consoleTwin(getConseilPdf, { ...twin, operationId: 'consoleGetConseilPdf' }),
  path: '/advice/{conseil_id}/pdf',
});

export const listConsoleConseils = defineEndpoint({
  ...consoleTwin(listConseils, { ...twin, operationId: 'consoleListConseils' }),
  path: '/advice',
});

export const CONSOLE_COMPARISON_ENDPOINTS = [
  getConsoleRiskSchema,
  createConsoleComparison,
  getConsoleComparison,
  listConsoleComparisons,
  createConsoleConseil,
  getConsoleConseilPdf,
  listConsoleConseils,
] as const;
