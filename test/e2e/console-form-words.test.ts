// @module-tag browser
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createOpportunity } from '../../server/crm/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { signedIn } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { createUser } from '../helpers/oauth.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';

/**
 * No validator's text in any form, in either language: every form of the console sent with bad
 * input, in real Chromium (clients, opportunities and an opportunity's page, API keys, pricing,
 * comparison, users, settings, credits, webhooks, sync); each problem shows next to its field in
 * the console's words, and no page text reads like zod's ("Too small: expected string to have >=1
 * characters") or repeats the service's English.
 */
const ui = useConsoleBrowser({
  server: { insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })] },
  // The refusals the test provokes.
  expected: (text) => text.includes('the server responded with a status of 400'),
});

/** What a validator or the service's English would say, never a person's words. */
const RAW =
  /Too (small|big)|expected (string|number|boolean)|Invalid (input|string|email|option)|>=|<=|must match|received undefined|this value is not accepted|body\.|dicData\./;

const WORDS = {
  en: {
    clients: 'Clients',
    newClient: 'New client',
    createClient: 'Create the client',
    lastName: 'Last name',
    email: 'Email',
    postcode: 'Postcode',
    opportunities: 'Opportunities',
    newOpportunity: 'New opportunity',
    title: 'Title',
    product: 'Product',
    contact: 'Contact’s last name',
    value: 'Expected value (€)',
    newKey: 'New key',
    keyName: 'Name',
    ips: 'IP allowlist (optional)',
    createKey: 'Create the key',
    scopes: 'Scopes',
    insurer: 'Insurer',
    check: 'Check (dry run)',
    compare: 'Compare the insurers',
    compareForm: 'Compare',
  },
  fr: {
    clients: 'Clients',
    newClient: 'Nouveau client',
    createClient: 'Créer le client',
    lastName: 'Nom',
    email: 'Courriel',
    postcode: 'Code postal',
    opportunities: 'Opportunités',
    newOpportunity: 'Nouvelle opportunité',
    title: 'Intitulé',
    product: 'Produit',
    contact: 'Nom du contact',
    value: 'Valeur attendue (€)',
    newKey: 'Nouvelle clé',
    keyName: 'Nom',
    ips: 'Adresses IP autorisées (facultatif)',
    createKey: 'Créer la clé',
    scopes: 'Droits',
    insurer: 'Assureur',
    check: 'Vérifier (simulation)',
    compare: 'Comparer les assureurs',
    compareForm: 'Comparer',
  },
} as const;

async function expectWords(page: Page, where: string, form: Locator): Promise<void> {
  await expect.poll(() => form.locator('[aria-invalid="true"]').count(), { message: `${where}: a field is marked` }).toBeGreaterThan(0);
  const text = await page.locator('main').innerText();
  expect(text, `${where}: validator text on the page`).not.toMatch(RAW);
}

describe('no validator text in the console’s forms', () => {
  for (const lang of ['en', 'fr'] as const) {
    it(`${lang}: clients, opportunities, API keys, pricing and comparison with bad input`, async () => {
      const w = WORDS[lang];
      const user = await createUser(ui.server, `Cabinet Mots ${lang}`);
      grantCredits(ui.server.deps, user.cabinetId, 100);
      const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/clients', { locale: lang === 'fr' ? 'fr-FR' : 'en-GB' });

      // A client with only a postcode of an address, and an email that is not one.
      await page.getByRole('button', { name: w.newClient }).click();
      const client = page.getByRole('form', { name: w.newClient });
      await client.getByLabel(w.lastName, { exact: true }).fill('Martin');
      await client.getByLabel(w.email, { exact: false }).first().fill('martin@');
      await client.getByLabel(w.postcode, { exact: false }).first().fill('690');
      await client.getByRole('button', { name: w.createClient }).click();
      await expectWords(page, `${lang} client`, client);

      // An opportunity with a contact email that is not one and a value that is not a number.
      await page.getByRole('link', { name: w.opportunities, exact: true }).click();
      await page.getByRole('button', { name: w.newOpportunity }).click();
      const opportunity = page.getByRole('form', { name: w.newOpportunity });
      await opportunity.getByLabel(w.title, { exact: true }).fill('Auto');
      await opportunity.getByLabel(w.product, { exact: true }).fill('auto');
      await opportunity.getByLabel(w.contact, { exact: true }).fill('Martin');
      await opportunity.getByLabel(w.email, { exact: false }).fill('martin@');
      await opportunity.getByRole('button', { name: w.newOpportunity }).click();
      await expectWords(page, `${lang} opportunity`, opportunity);

      // An API key without a name or scope, then with an address that is not one.
      await page.goto(`${ui.server.url}/console/keys`);
      await page.getByRole('button', { name: w.newKey }).click();
      const key = page.locator('#create-key');
      await key.getByRole('button', { name: w.createKey }).click();
      await expectWords(page, `${lang} key (empty)`, key);
      await key.getByLabel(w.keyName, { exact: true }).fill('Intégration');
      await key.getByRole('group', { name: w.scopes }).getByRole('checkbox').first().check();
      await key.getByLabel(w.ips, { exact: true }).fill('10.0.0.1 pas-une-adresse');
      await key.getByRole('button', { name: w.createKey }).click();
      await expect.poll(() => key.locator('#key-ips[aria-invalid="true"]').count()).toBe(1);
      await key
        .getByText(/pas-une-adresse/)
        .first()
        .waitFor();
      await expectWords(page, `${lang} key (address)`, key);

      // Pricing: a postcode of three digits.
      await page.goto(`${ui.server.url}/console/pricing`);
      await page.getByLabel(w.insurer, { exact: true }).selectOption('sandbox');
      await page.getByLabel(w.product, { exact: true }).selectOption('auto');
      const pricing = page.getByRole('form', { name: 'Assurance auto' });
      await pricing.getByLabel('Code postal', { exact: true }).fill('690');
      await pricing.getByRole('button', { name: w.check }).click();
      await expectWords(page, `${lang} pricing`, pricing);

      // Comparing with an empty form.
      await page.goto(`${ui.server.url}/console/compare`);
      const compare = page.getByRole('form', { name: w.compareForm });
      await compare.getByRole('button', { name: w.compare }).click();
      await expectWords(page, `${lang} compare`, compare);
    }, 90_000);
  }

  const MORE = {
    en: {
      createUser: 'Create the account',
      email: 'Email',
      password: 'Password',
      orias: 'ORIAS number',
      save: 'Save',
      grantAmount: 'Credits to add',
      grant: 'Add the credits',
      newWebhook: 'New webhook',
      url: 'Endpoint URL',
      createWebhook: 'Create webhook',
      connect: 'Connect',
      edit: 'Edit',
      value: /^Expected value/,
      addNote: 'Add the note',
    },
    fr: {
      createUser: 'Créer le compte',
      email: 'Courriel',
      password: 'Mot de passe',
      orias: 'Numéro ORIAS',
      save: 'Enregistrer',
      grantAmount: 'Crédits à ajouter',
      grant: 'Ajouter les crédits',
      newWebhook: 'Nouveau webhook',
      url: 'URL de destination',
      createWebhook: 'Créer le webhook',
      connect: 'Se connecter',
      edit: 'Modifier',
      value: /^Valeur attendue/,
      addNote: 'Ajouter la note',
    },
  } as const;

  /** The form that holds a button of that name. */
  const formWith = (page: Page, button: string) =>
    page.locator('form').filter({ has: page.getByRole('button', { name: button, exact: true }) });

  for (const lang of ['en', 'fr'] as const) {
    it(`${lang}: users, settings, credits, webhooks, sync and an opportunity’s page with bad input`, async () => {
      const m = MORE[lang];
      const user = await createUser(ui.server, `Cabinet Formulaires ${lang}`);
      const lead = createOpportunity(
        ui.server.deps,
        user.cabinetId,
        { title: 'Flotte', product: 'auto', contact: { last_name: 'Roux' }, stage: 'new', expected_value_eur: 100, tags: [] },
        'console',
      );
      const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/users', { locale: lang === 'fr' ? 'fr-FR' : 'en-GB' });

      // A user: nothing typed, then an address that is not one.
      const users = formWith(page, m.createUser);
      await users.getByRole('button', { name: m.createUser }).click();
      await expectWords(page, `${lang} user (empty)`, users);
      await users.getByLabel(m.email, { exact: true }).fill('martin@');
      await users.getByLabel(m.password, { exact: true }).fill('correct horse battery');
      await users.getByRole('button', { name: m.createUser }).click();
      await expect.poll(() => users.locator('#user-email[aria-invalid="true"]').count()).toBe(1);
      await expectWords(page, `${lang} user (email)`, users);

      // Settings: an ORIAS number of two digits.
      await page.goto(`${ui.server.url}/console/settings`);
      const identity = page.locator('form').filter({ has: page.getByLabel(m.orias, { exact: true }) });
      await identity.getByLabel(m.orias, { exact: true }).fill('12');
      await identity.getByRole('button', { name: m.save }).click();
      await expectWords(page, `${lang} settings`, identity);

      // Credits: none.
      await page.goto(`${ui.server.url}/console/wallet`);
      const grant = formWith(page, m.grant);
      await grant.getByLabel(m.grantAmount, { exact: true }).fill('0');
      await grant.getByRole('button', { name: m.grant }).click();
      await expectWords(page, `${lang} credits`, grant);

      // A webhook to a plain-HTTP address.
      await page.goto(`${ui.server.url}/console/webhooks`);
      await page.getByRole('button', { name: m.newWebhook }).click();
      const webhook = formWith(page, m.createWebhook);
      await webhook.getByLabel(m.url, { exact: true }).fill('http://crm.example/hooks');
      await webhook.getByRole('button', { name: m.createWebhook }).click();
      await expectWords(page, `${lang} webhook`, webhook);

      // Sync: connecting with nothing typed.
      await page.goto(`${ui.server.url}/console/sync`);
      const sync = formWith(page, m.connect);
      await sync.getByRole('button', { name: m.connect }).click();
      await expectWords(page, `${lang} sync`, sync);

      // An opportunity's page: a value that is not an amount, then an empty note.
      await page.goto(`${ui.server.url}/console/opportunities/${lead.opportunity_id}`);
      await page.getByRole('button', { name: m.edit, exact: true }).click();
      const edit = formWith(page, m.save);
      await edit.getByLabel(m.value).fill('douze');
      await edit.getByRole('button', { name: m.save }).click();
      await expectWords(page, `${lang} opportunity (edit)`, edit);
      const note = formWith(page, m.addNote);
      await note.getByRole('button', { name: m.addNote }).click();
      await expectWords(page, `${lang} opportunity (note)`, note);
    }, 90_000);
  }
});
