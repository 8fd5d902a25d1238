import { InsurersPage } from '../pages/automation/InsurersPage.js';
import { JobsPage } from '../pages/automation/JobsPage.js';
import { MfaPrompts } from '../pages/automation/MfaPrompt.js';
import { PricingPage } from '../pages/automation/PricingPage.js';
import './automation.css';
import type { ConsoleSlice } from './types.js';

/** Insurers and credentials, pricing from a product's schema, live jobs, and the MFA prompt over every page. */
export const automationSlice: ConsoleSlice = {
  pages: [
    { path: '/console/insurers', label: { en: 'Insurers', fr: 'Assureurs' }, component: InsurersPage },
    { path: '/console/pricing', label: { en: 'Pricing', fr: 'Tarification' }, component: PricingPage },
    { path: '/console/jobs', label: { en: 'Jobs', fr: 'Tâches' }, component: JobsPage },
  ],
  overlays: [MfaPrompts],
};
