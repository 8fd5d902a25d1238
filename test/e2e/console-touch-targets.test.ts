// @module-tag browser
import { describe, expect, it } from 'vitest';
import { createClient } from '../../server/crm/clients.js';
import { createOpportunity } from '../../server/crm/service.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { createDevis } from '../../server/devis/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { createWebhook } from '../../server/webhooks/service.js';
import { SANDBOX_PRODUCTS } from '../../insurers/sandbox/src/products.js';
import { consoleClient, signedIn, smallTargets } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { createUser } from '../helpers/oauth.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';

/**
 * Every control of the console's pages is at least 24×24 px on a phone, in French (the longer
 * words) and English, with records on each page; a link inside a sentence is exempt (WCAG 2.5.8).
 * On the way, no English page writes a colon with French spacing ("Created :").
 */
const ui = useConsoleBrowser({
  server: {
    insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })],
    config: { sandboxLatencyMs: 0, tarificationQuotaPerHour: 1000 },
  },
});

const PAGES = [
  '/console/',
  '/console/pricing',
  '/console/compare',
  '/console/jobs',
  '/console/dashboard',
  '/console/clients',
  '/console/clients/import',
  '/console/opportunities',
  '/console/quotes',
  '/console/insurers',
  '/console/keys',
  '/console/wallet',
  '/console/users',
  '/console/settings',
  '/console/account',
  '/console/webhooks',
  '/console/sync',
  '/console/office-network',
  '/console/audit',
  '/console/search?q=dupont',
];

describe('touch targets', () => {
  it('every control on every page is at least 24×24 px at 390 px wide, in both languages', async () => {
    const user = await createUser(ui.server, 'Cabinet Doigts');
    const deps = ui.server.deps;
    grantCredits(deps, user.cabinetId, 100);
    setInsurerCredentials(deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'demo' });
    const client = createClient(deps, user.cabinetId, {
      type: 'person',
      last_name: 'Dupont',
      first_name: 'Marie',
      email: 'marie@dupont.fr',
    });
    createDevis(deps, user.cabinetId, { client_id: client.client_id, compagnie: 'sandbox', produit: 'auto', dicData: {} });
    const opportunity = createOpportunity(
      deps,
      user.cabinetId,
      { title: 'Habitation Dupont', product: 'mrh', contact: { last_name: 'Dupont' }, stage: 'new', expected_value_eur: 300, tags: [] },
      'console',
    );
    createWebhook(deps, user.cabinetId, { url: 'https://crm.example/hooks', events: ['devis.signed'] });
    ui.server.createKey(user.cabinetId, { name: 'Site' });
    const broker = await consoleClient(ui.server, user);
    await broker.request('/api/v1/console/tarifications', {
      method: 'POST',
      json: { compagnie: 'sandbox', produit: 'auto', dicData: { ...SANDBOX_PRODUCTS[0].example, insured_name: 'Marie Dupont' } },
    });
    const found: string[] = [];
    for (const locale of ['fr-FR', 'en-GB']) {
      const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/', { locale, viewport: { width: 390, height: 844 } });
      for (const path of [...PAGES, `/console/clients/${client.client_id}`, `/console/opportunities/${opportunity.opportunity_id}`]) {
        await page.goto(`${ui.server.url}${path}`);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        await page.waitForLoadState('networkidle');
        for (const small of await smallTargets(page)) found.push(`${locale} ${path}: ${small}`);
        // French typography (a space before a colon) never leaks into English.
        if (locale === 'en-GB') {
          const text = await page.locator('body').innerText();
          for (const match of text.matchAll(/\S+ [:;!?](?=\s|$)/g)) found.push(`${path}: French spacing in English: "${match[0]}"`);
        }
      }
    }
    expect(found).toEqual([]);
  }, 120_000);
});
