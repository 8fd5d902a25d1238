import { InsurersPage } from '../pages/automation/InsurersPage.js';
import { JobsPage } from '../pages/automation/JobsPage.js';
import { MfaPrompts, useWaitingCount } from '../pages/automation/MfaPrompt.js';
import { PricingPage } from '../pages/automation/PricingPage.js';
import './automation.css';
import type { ConsoleSlice } from './types.js';

/** Insurers and credentials, pricing from a product's schema, live jobs, and the MFA prompt above every page. */
export const automationSlice: ConsoleSlice = {
  pages: [
    { path: '/console/pricing', label: { en: 'Pricing', fr: 'Tarification' }, daily: true, component: PricingPage },
    { path: '/console/jobs', label: { en: 'Jobs', fr: 'Tâches' }, daily: true, component: JobsPage },
    { path: '/console/insurers', label: { en: 'Insurers', fr: 'Assureurs' }, component: InsurersPage },
  ],
  overlays: [MfaPrompts],
  attention: { page: '/console/jobs', useCount: useWaitingCount },
};
