// @module-tag browser
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../server/crm/clients.js';
import { createOpportunity } from '../../server/crm/service.js';
import { createDevis } from '../../server/devis/service.js';
import { audit } from '../helpers/axe.js';
import { saveScreenshot, signedIn } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { createUser } from '../helpers/oauth.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';

/**
 * The header's search in real Chromium: typed on any page, its results grouped by kind, each a
 * link to its record; in English on a desktop and in French on a phone (the header folded behind
 * Menu), with axe and no sideways scroll.
 */
const ui = useConsoleBrowser({
  server: { insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })] },
});

async function seedCabinet(name: string) {
  const user = await createUser(ui.server, name);
  const deps = ui.server.deps;
  const garnier = createClient(deps, user.cabinetId, {
    type: 'person',
    last_name: 'Garnier',
    first_name: 'Alice',
    email: 'alice@garnier.fr',
  });
  createClient(deps, user.cabinetId, { type: 'company', last_name: 'Roux', company_name: 'Garnier & Fils' });
  createDevis(deps, user.cabinetId, { client_id: garnier.client_id, compagnie: 'sandbox', produit: 'auto', dicData: {} });
  createOpportunity(
    deps,
    user.cabinetId,
    { title: 'Flotte Garnier', product: 'auto', contact: { last_name: 'Garnier' }, stage: 'qualified', expected_value_eur: 1200, tags: [] },
    'console',
  );
  return { user, garnier };
}

const scrollWidth = async (page: Page) => (await page.evaluate('document.documentElement.scrollWidth')) as number;

describe('the header’s search', () => {
  it('in English on a desktop: from any page, results by kind, each a link to its record', async () => {
    const { user, garnier } = await seedCabinet('Cabinet Recherche');
    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/jobs');
    const box = page.getByRole('search', { name: 'Search the cabinet' });
    await box.getByRole('searchbox', { name: 'Search the cabinet' }).fill('garn');
    await box.getByRole('searchbox').press('Enter');
    await page.waitForURL(/\/console\/search\?q=garn$/);
    await page.getByRole('status').getByText('Results for “garn”').waitFor();
    await page.getByRole('heading', { level: 2, name: 'Clients (2)' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Quotes (1)' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Opportunities (1)' }).waitFor();
    expect(await page.getByRole('link', { name: /^Alice Garnier · alice@garnier\.fr/ }).getAttribute('href')).toBe(
      `/console/clients/${garnier.client_id}`,
    );
    await page.getByRole('link', { name: /^Flotte Garnier · Garnier · Qualified/ }).waitFor();
    expect(await audit(page, 'search results (en)')).toEqual([]);
    await saveScreenshot(page, 'search-results');

    // The page's own box searches again; nothing found says so.
    await page.getByRole('main').getByRole('searchbox').fill('zz-nobody');
    await page.getByRole('main').getByRole('button', { name: 'Search' }).click();
    await page.getByRole('status').getByText('Nothing in the cabinet matches “zz-nobody”.').waitFor();
    await page.getByRole('main').getByRole('searchbox').fill('g');
    await page.getByRole('main').getByRole('button', { name: 'Search' }).click();
    await page.getByRole('status').getByText('Type at least two characters.').waitFor();

    // A client found opens its page; the search is not a menu entry.
    await page.getByRole('main').getByRole('searchbox').fill('Alice');
    await page.getByRole('main').getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: /^Alice Garnier · alice@/ }).click();
    await page.waitForURL(new RegExp(`/console/clients/${garnier.client_id}$`));
    expect(await page.getByRole('navigation').getByRole('link', { name: 'Search' }).count()).toBe(0);
  });

  it('in French on a phone: the box is behind Menu; results pass axe and fit the width', async () => {
    const { user } = await seedCabinet('Cabinet Téléphone');
    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/clients', {
      locale: 'fr-FR',
      viewport: { width: 390, height: 844 },
    });
    await page.getByRole('button', { name: 'Menu' }).click();
    const box = page.getByRole('search', { name: 'Rechercher dans le cabinet' });
    await box.getByRole('searchbox').fill('garnier');
    await box.getByRole('button', { name: 'Rechercher' }).click();
    await page.getByRole('status').getByText('Résultats pour « garnier »').waitFor();
    await page.getByRole('heading', { level: 2, name: 'Devis (1)' }).waitFor();
    await page.getByRole('link', { name: /^Flotte Garnier · Garnier · Qualifiée/ }).waitFor();
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
    expect(await audit(page, 'search results (fr, phone)')).toEqual([]);
  });
});
