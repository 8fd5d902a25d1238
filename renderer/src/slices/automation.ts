import { DashboardPage } from '../pages/automation/DashboardPage.js';
import { InsurersPage } from '../pages/automation/InsurersPage.js';
import { JobsPage } from '../pages/automation/JobsPage.js';
import { MfaPrompts, useWaitingCount } from '../pages/automation/MfaPrompt.js';
import { PricingPage } from '../pages/automation/PricingPage.js';
import { ComparePage } from '../pages/compare/ComparePage.js';
import './automation.css';
import './compare.css';
import type { ConsoleSlice } from './types.js';

/** Insurers and credentials, pricing from a product's schema, comparing insurers for one risk, live jobs and their dashboard, and the MFA prompt above every page. */
export const automationSlice: ConsoleSlice = {
  pages: [
    { path: '/console/pricing', label: { en: 'Pricing', fr: 'Tarification' }, daily: true, component: PricingPage },
    { path: '/console/compare', label: { en: 'Compare', fr: 'Comparer' }, daily: true, component: ComparePage },
    { path: '/console/jobs', label: { en: 'Jobs', fr: 'Tâches' }, daily: true, component: JobsPage },
    { path: '/console/dashboard', label: { en: 'Dashboard', fr: 'Tableau de bord' }, daily: true, component: DashboardPage },
    { path: '/console/insurers', label: { en: 'Insurers', fr: 'Assureurs' }, component: InsurersPage },
  ],
  overlays: [MfaPrompts],
  attention: { page: '/console/jobs', useCount: useWaitingCount },
};
