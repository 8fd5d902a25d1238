// @module-tag browser
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../server/audit/service.js';
import { addCabinetUser } from '../../server/tenancy/users.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { audit } from '../helpers/axe.js';
import { fillSandboxAutoPricing, saveScreenshot, signedIn } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { AUTO_DIC_DATA } from '../helpers/insurance-data.js';
import { createUser } from '../helpers/oauth.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';

/**
 * A new cabinet's first quotes in real Chromium: it prices with an empty wallet and reads the
 * refusal beside the button (focused, linked to the Wallet page), adds credits there (confirmed,
 * audited), prices (the insured becomes a client, once), and asking the same pricing again names
 * the finished one and links to it; a quote priced through the API without a client is attached to
 * one from the Quotes page, then signed.
 */
const ui = useConsoleBrowser({
  server: {
    insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })],
    config: { sandboxLatencyMs: 0, tarificationQuotaPerHour: 1000 },
  },
  // The refusals the test provokes: no credits (402) and the same pricing again (429).
  expected: (text) => /the server responded with a status of (402|429)/.test(text),
});

const focusedText = (page: Page) =>
  page.evaluate(
    () =>
      (globalThis as unknown as { document: { activeElement: { textContent: string } | null } }).document.activeElement?.textContent ?? '',
  );

describe('a new cabinet’s first quotes in the console', () => {
  it('an empty wallet is refused beside the button; credits added on the Wallet page; the same pricing again links to the first', async () => {
    const user = await createUser(ui.server, 'Cabinet Nouveau');
    setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'demo' });
    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/pricing');
    let form = await fillSandboxAutoPricing(page);

    // No credits: the refusal is beside the button, focused, and links to where credits are added.
    await form.getByRole('button', { name: 'Price', exact: true }).click();
    const refusal = form.getByRole('alert');
    await refusal.getByText(/does not have enough credits.*An administrator adds credits on the Wallet page/).waitFor();
    await expect.poll(() => focusedText(page)).toContain('does not have enough credits');
    // A pricing that cannot go makes nobody a client.
    expect(ui.server.deps.db.sqlite.prepare('SELECT count(*) FROM clients WHERE cabinet_id = ?').pluck().get(user.cabinetId)).toBe(0);
    expect(await audit(page, 'pricing refused (en)')).toEqual([]);
    await refusal.getByRole('link', { name: 'Wallet & status page' }).click();

    // Add credits: amount and reason, confirmed; the balance and the ledger show them, the audit log too.
    await page.getByRole('heading', { level: 1, name: 'Wallet & status' }).waitFor();
    const grant = page.getByRole('form', { name: 'Add credits' });
    await grant.getByLabel('Credits to add').fill('0');
    await grant.getByRole('button', { name: 'Add the credits' }).click();
    await grant.getByText('Type a whole number of credits, 1 or more.').waitFor();
    await grant.getByLabel('Credits to add').fill('50');
    await grant.getByLabel('Reason').fill('Facture 2026-118');
    await grant.getByRole('button', { name: 'Add the credits' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add 50 credits to the wallet?' });
    await dialog.getByRole('button', { name: 'Add the credits' }).click();
    await page.getByText('50 credits added; the balance is 50.').waitFor();
    await page.getByTestId('wallet-balance').getByText('50 credits').waitFor();
    await page.getByRole('cell', { name: 'Facture 2026-118' }).waitFor();
    expect(creditBalance(ui.server.deps, user.cabinetId)).toBe(50);
    expect(listAudit(ui.server.deps, user.cabinetId, { action: 'credits.granted', limit: 5 })[0]).toMatchObject({
      actor: { kind: 'user', label: user.email },
      details: { amount: 50, balance: 50, note: 'Facture 2026-118' },
    });
    expect(await audit(page, 'wallet with the grant form (en)')).toEqual([]);
    await saveScreenshot(page, 'wallet-grant');

    // Price, then ask the same pricing again once it is done: the refusal names the finished one and links to it.
    await page.getByRole('link', { name: 'Pricing' }).click();
    form = await fillSandboxAutoPricing(page);
    await form.getByRole('button', { name: 'Price', exact: true }).click();
    await page.waitForURL(/\/console\/jobs\?job=/);
    const jobId = new URL(page.url()).searchParams.get('job') ?? '';
    await expect
      .poll(() => ui.server.deps.db.sqlite.prepare('SELECT status FROM jobs WHERE id = ?').pluck().get(jobId), { timeout: 60_000 })
      .toBe('completed');
    await page.getByRole('link', { name: 'Pricing' }).click();
    form = await fillSandboxAutoPricing(page);
    await form.getByRole('button', { name: 'Price', exact: true }).click();
    const again = form.getByRole('alert');
    await again.getByText(/was done a few minutes ago: open it to read its result/).waitFor();
    await again.getByRole('link', { name: 'Open that pricing' }).click();
    await page.waitForURL(new RegExp(`/console/jobs/${jobId}$`));
    // Both times the quote was for the insured, made a client once.
    const clients = ui.server.deps.db.sqlite
      .prepare("SELECT id FROM clients WHERE cabinet_id = ? AND last_name = 'Martin' AND first_name = 'Jeanne'")
      .pluck()
      .all(user.cabinetId);
    expect(clients).toHaveLength(1);
    expect(ui.server.deps.db.sqlite.prepare('SELECT client_id FROM devis WHERE job_id = ?').pluck().get(jobId)).toBe(clients[0]);

    // The wallet names the pricing it paid for, the client and the product each a link, and fits a phone.
    await page.getByRole('link', { name: 'Wallet & status' }).click();
    const debit = page.getByRole('row', { name: /Pricing Jeanne Martin · .+ at .+ -10/ });
    await debit.getByRole('link', { name: 'Jeanne Martin' }).waitFor();
    expect(await debit.getByRole('link', { name: 'Jeanne Martin' }).getAttribute('href')).toBe(`/console/clients/${String(clients[0])}`);
    expect(await debit.getByRole('link', { name: / at / }).getAttribute('href')).toBe(`/console/jobs/${jobId}`);
    await page.setViewportSize({ width: 390, height: 844 });
    expect((await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(390);
    expect(await audit(page, 'wallet ledger at phone width (en)')).toEqual([]);
  }, 120_000);

  it('a quote priced without a client is attached to one from the Quotes page, then signed', async () => {
    const user = await createUser(ui.server, 'Cabinet Rattachement');
    grantCredits(ui.server.deps, user.cabinetId, 100);
    setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'demo' });
    const api = apiClient(ui.server, ui.server.createKey(user.cabinetId).key);
    const enqueued = await api.post('/automation/tarifications', {
      compagnie: 'sandbox',
      produit: 'auto',
      dicData: { ...AUTO_DIC_DATA, insured_name: 'Léon Bernard' },
    });
    expect(enqueued.status).toBe(202);
    await expect
      .poll(async () => (await api.get(`/automation/jobs/${String(enqueued.body.job_id)}`)).body.status, { timeout: 60_000 })
      .toBe('completed');
    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/quotes');
    const card = page.getByRole('listitem', { name: /^No client · / });
    await card.getByRole('button', { name: 'Attach to a client…' }).click();
    await card.getByLabel('Client', { exact: true }).fill('Léon Bernard');
    await card.getByRole('button', { name: 'Create the client “Léon Bernard”' }).click();
    await page.getByText('The quote is now Léon Bernard’s: it can be signed.').waitFor();
    const attached = page.getByRole('listitem', { name: /^Léon Bernard · / });
    await attached.getByRole('button', { name: 'Mark as signed…' }).click();
    await page
      .getByRole('dialog', { name: 'Mark the quote of Léon Bernard as signed?' })
      .getByRole('button', { name: 'Mark as signed' })
      .click();
    await page.getByText('The quote is signed.').waitFor();
    expect(await audit(page, 'quotes after attaching (en)')).toEqual([]);
  });

  it('in French, a broker reads who adds credits; an administrator’s form passes axe', async () => {
    const admin = await createUser(ui.server, 'Cabinet Courtiers');
    const broker = { email: `broker-${admin.userId}@example.fr`, password: 'correct horse battery' };
    await addCabinetUser(ui.server.deps, admin.cabinetId, { ...broker, role: 'broker' });
    const brokerPage = await signedIn(ui.browser, ui.server, ui.tabs, broker, '/console/wallet', { locale: 'fr-FR' });
    await brokerPage.getByText('Un administrateur du cabinet ajoute des crédits ici.').waitFor();
    expect(await brokerPage.getByRole('form', { name: 'Ajouter des crédits' }).count()).toBe(0);
    const page = await signedIn(ui.browser, ui.server, ui.tabs, admin, '/console/wallet', {
      locale: 'fr-FR',
      viewport: { width: 390, height: 844 },
    });
    await page.getByRole('form', { name: 'Ajouter des crédits' }).waitFor();
    expect(await audit(page, 'portefeuille (fr, téléphone)')).toEqual([]);
  });
});
