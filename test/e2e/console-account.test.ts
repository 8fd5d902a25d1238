// @module-tag browser
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initCabinet } from '../../server/tenancy/service.js';
import { consoleClient, saveScreenshot, signedIn, type ConsoleClient } from '../helpers/console.js';
import { showFolded, useConsoleBrowser } from '../helpers/console-browser.js';

/**
 * Account basics in real Chromium against the built console: an admin resets a broker's password
 * (the temporary password shown once) and disables another; the broker signs in with the temporary
 * password and is made to choose a new one; a person changes their own password; the Keys page lists
 * first, opens its form on demand and fits a phone. In English and French, at 1280×800 and 390×844;
 * every page is saved as a screenshot, and any page or console error fails the test.
 */

const PASSWORD = 'correct horse battery';
const ADMIN = { email: 'admin@cabinet-perrin.fr', password: PASSWORD };
/** The browser logs every 401/403 answer as a failed resource; those are expected answers here. */
const EXPECTED_NETWORK_ERROR = /Failed to load resource: the server responded with a status of 40[13]/;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

type Viewport = typeof DESKTOP;
type Lang = 'en' | 'fr';

/** The words the test reads on the pages, in each language. */
const WORDS = {
  en: {
    locale: 'en-GB',
    email: 'Email',
    password: 'Password',
    signIn: 'Sign in',
    resetPassword: 'Reset password',
    resetTitle: (email: string) => `Reset the password of ${email}?`,
    disable: 'Disable',
    disableTitle: (email: string) => `Disable ${email}?`,
    disabled: 'Disabled',
    mustChange: 'Must change password',
    temporary: 'Temporary password',
    handOver: 'Hand it over in person',
    copy: 'Copy',
    copied: 'Copied to the clipboard.',
    noted: 'Done, I noted it',
    accountDisabled: 'Your account is disabled. Ask an administrator',
    resetWarning: 'An administrator reset your password.',
    current: 'Current password',
    next: 'New password',
    confirm: 'Confirm the new password',
    change: 'Change the password',
    tooShort: 'The password must have at least 10 characters.',
    differ: 'The two passwords are different.',
    wrongCurrent: 'The current password is wrong; nothing was changed.',
    changed: 'Your password was changed.',
    myAccount: 'My account',
    keys: 'API keys',
    newKey: 'New key',
    createKey: 'Create the key',
    keyName: 'Name',
  },
  fr: {
    locale: 'fr-FR',
    email: 'Courriel',
    password: 'Mot de passe',
    signIn: 'Se connecter',
    resetPassword: 'Réinitialiser le mot de passe',
    resetTitle: (email: string) => `Réinitialiser le mot de passe de ${email} ?`,
    disable: 'Désactiver',
    disableTitle: (email: string) => `Désactiver ${email} ?`,
    disabled: 'Désactivé',
    mustChange: 'Doit changer son mot de passe',
    temporary: 'Mot de passe provisoire',
    handOver: 'Remettez-le en main propre',
    copy: 'Copier',
    copied: 'Copiée dans le presse-papiers.',
    noted: 'C’est fait, je l’ai noté',
    accountDisabled: 'Votre compte est désactivé. Demandez à un administrateur',
    resetWarning: 'Un administrateur a réinitialisé votre mot de passe.',
    current: 'Mot de passe actuel',
    next: 'Nouveau mot de passe',
    confirm: 'Confirmez le nouveau mot de passe',
    change: 'Changer le mot de passe',
    tooShort: 'Le mot de passe doit faire au moins 10 caractères.',
    differ: 'Les deux mots de passe sont différents.',
    wrongCurrent: 'Le mot de passe actuel est faux ; rien n’a été changé.',
    changed: 'Votre mot de passe a été changé.',
    myAccount: 'Mon compte',
    keys: 'Clés d’API',
    newKey: 'Nouvelle clé',
    createKey: 'Créer la clé',
    keyName: 'Nom',
  },
} as const;

let admin: ConsoleClient;
/** The tabs the tests open, the clipboard allowed (the temporary password is copied from the page). */
const ui = useConsoleBrowser({ expected: (text) => EXPECTED_NETWORK_ERROR.test(text), closeTabs: 'afterAll' });
const CLIPBOARD = ['clipboard-read', 'clipboard-write'];

beforeAll(async () => {
  await initCabinet(ui.server.deps, { cabinet: 'Cabinet Perrin', ...ADMIN });
  admin = await consoleClient(ui.server, ADMIN);
});

function newPage(lang: Lang, viewport: Viewport): Promise<Page> {
  return ui.newPage({ locale: WORDS[lang].locale, viewport, permissions: CLIPBOARD });
}

/** Fills the login page; the caller waits for where it leads. */
async function fillLogin(page: Page, lang: Lang, user: { email: string; password: string }, returnTo = '/console/'): Promise<void> {
  const w = WORDS[lang];
  await page.goto(`${ui.server.url}/console/login?return_to=${encodeURIComponent(returnTo)}`);
  await page.getByLabel(w.email).fill(user.email);
  await page.getByLabel(w.password).fill(user.password);
  await page.getByRole('button', { name: w.signIn }).click();
}

async function addBroker(name: string): Promise<{ email: string; password: string }> {
  const user = { email: `${name}@cabinet-perrin.fr`, password: PASSWORD };
  const response = await admin.request('/api/v1/console/users', { method: 'POST', json: { ...user, role: 'broker' } });
  expect(response.status).toBe(201);
  return user;
}

/** No sideways scrolling of the page itself (a table may scroll inside its own frame). */
async function expectNoSidewaysScroll(page: Page, width: number): Promise<void> {
  // A string: this file is compiled without the DOM library.
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
}

function shot(page: Page, name: string, lang: Lang, viewport: Viewport): Promise<void> {
  return saveScreenshot(page, `account-${name}-${lang}-${viewport.width}`);
}

const JOURNEYS: [Lang, Viewport][] = [
  ['en', DESKTOP],
  ['fr', PHONE],
];

describe.each(JOURNEYS)('account basics in %s at %o', (lang, viewport) => {
  const w = WORDS[lang];
  const tab = { locale: w.locale, viewport, permissions: CLIPBOARD };
  const tag = `${lang}${viewport.width}`;
  let temporary = '';
  let reset: { email: string; password: string };
  let disabled: { email: string; password: string };

  beforeAll(async () => {
    reset = await addBroker(`reset-${tag}`);
    disabled = await addBroker(`disabled-${tag}`);
  });

  it('an admin resets a broker’s password (shown once, to hand over) and disables another, each confirmed', async () => {
    const page = await signedIn(ui.browser, ui.server, ui.tabs, ADMIN, '/console/users', tab);
    await page.getByRole('row', { name: new RegExp(reset.email) }).waitFor();
    await expectNoSidewaysScroll(page, viewport.width);
    await shot(page, 'users', lang, viewport);

    await page.getByRole('button', { name: `${w.resetPassword}: ${reset.email}` }).click();
    const resetDialog = page.getByRole('dialog', { name: w.resetTitle(reset.email) });
    await resetDialog.waitFor();
    await shot(page, 'users-reset-confirm', lang, viewport);
    await resetDialog.getByRole('button', { name: w.resetPassword }).click();
    const field = page.getByLabel(w.temporary, { exact: true });
    await field.waitFor();
    temporary = await field.inputValue();
    expect(temporary).toMatch(/^[A-Z2-9]{4}(-[A-Z2-9]{4}){3}$/);
    await page.getByText(w.handOver).waitFor();
    await page.getByRole('button', { name: w.copy, exact: true }).click();
    await page.getByRole('status').filter({ hasText: w.copied }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(temporary);
    await page
      .getByRole('row', { name: new RegExp(reset.email) })
      .getByText(w.mustChange)
      .waitFor();
    await expectNoSidewaysScroll(page, viewport.width);
    await shot(page, 'users-temporary-password', lang, viewport);
    await page.getByRole('button', { name: w.noted }).click();
    expect(await page.content()).not.toContain(temporary);

    await page.getByRole('button', { name: `${w.disable}: ${disabled.email}` }).click();
    const disableDialog = page.getByRole('dialog', { name: w.disableTitle(disabled.email) });
    await disableDialog.waitFor();
    await disableDialog.getByRole('button', { name: w.disable }).click();
    await page
      .getByRole('row', { name: new RegExp(disabled.email) })
      .getByText(w.disabled, { exact: true })
      .waitFor();
    await shot(page, 'users-disabled', lang, viewport);
  });

  it('the disabled broker is told to ask an administrator', async () => {
    const page = await newPage(lang, viewport);
    await fillLogin(page, lang, disabled);
    await page.getByRole('alert').filter({ hasText: w.accountDisabled }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/login');
    await shot(page, 'login-disabled', lang, viewport);
  });

  it('the broker signs in with the temporary password and must choose a new one before anything else', async () => {
    const page = await newPage(lang, viewport);
    // Until the new password is set, the console asks for nothing the service would refuse (401, 403).
    const refused: string[] = [];
    let changed = false;
    page.on('response', (response) => {
      if (!changed && [401, 403].includes(response.status()) && !response.url().endsWith('/console/session')) refused.push(response.url());
    });
    await fillLogin(page, lang, { email: reset.email, password: temporary });
    await page.waitForURL(`${ui.server.url}/console/account`);
    await page.getByRole('alert').filter({ hasText: w.resetWarning }).waitFor();
    await page.getByRole('main').getByText(reset.email, { exact: true }).first().waitFor();
    await page.getByText('Cabinet Perrin').waitFor();
    await expectNoSidewaysScroll(page, viewport.width);
    await shot(page, 'account-must-change', lang, viewport);

    // Anywhere else, the console sends them back here.
    await page.goto(`${ui.server.url}/console/wallet`);
    await page.waitForURL(`${ui.server.url}/console/account`);

    // Said before sending: too short, then two different passwords.
    await page.getByLabel(w.current, { exact: true }).fill(temporary);
    await page.getByLabel(w.next, { exact: true }).fill('short');
    await page.getByLabel(w.confirm, { exact: true }).fill('short');
    await page.getByRole('button', { name: w.change }).click();
    await page.getByRole('alert').filter({ hasText: w.tooShort }).waitFor();
    await page.getByLabel(w.next, { exact: true }).fill('my very own passphrase');
    await page.getByLabel(w.confirm, { exact: true }).fill('my very own passphrase!');
    await page.getByRole('button', { name: w.change }).click();
    await page.getByRole('alert').filter({ hasText: w.differ }).waitFor();
    await page.getByLabel(w.confirm, { exact: true }).fill('my very own passphrase');
    const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/account/password`);
    await page.getByRole('button', { name: w.change }).click();
    expect((await answer).status()).toBe(200);
    changed = true;
    expect(refused, 'asked before the password was changed').toEqual([]);
    await page.waitForURL(`${ui.server.url}/console/`);
    reset = { email: reset.email, password: 'my very own passphrase' };

    // Free to go anywhere now: the wallet page stays.
    await page.goto(`${ui.server.url}/console/wallet`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/wallet');
    await shot(page, 'after-change', lang, viewport);
  });

  it('a person changes their own password from My account (linked from their email in the header)', async () => {
    const page = await signedIn(ui.browser, ui.server, ui.tabs, reset, '/console/', tab);
    const ownEmail = page.getByRole('link', { name: reset.email });
    await showFolded(page, 'Menu', ownEmail);
    await ownEmail.click();
    await page.waitForURL(`${ui.server.url}/console/account`);
    await page.getByRole('heading', { name: w.myAccount, level: 1 }).waitFor();

    await page.getByLabel(w.current, { exact: true }).fill('not my password');
    await page.getByLabel(w.next, { exact: true }).fill('a second passphrase');
    await page.getByLabel(w.confirm, { exact: true }).fill('a second passphrase');
    await page.getByRole('button', { name: w.change }).click();
    await page.getByRole('alert').filter({ hasText: w.wrongCurrent }).waitFor();

    await page.getByLabel(w.current, { exact: true }).fill(reset.password);
    await page.getByRole('button', { name: w.change }).click();
    await page.getByRole('status').filter({ hasText: w.changed }).waitFor();
    expect(await page.getByLabel(w.current, { exact: true }).inputValue()).toBe('');
    await expectNoSidewaysScroll(page, viewport.width);
    await shot(page, 'account-changed', lang, viewport);

    // The new password opens the console; the old one no longer does.
    const fresh = await newPage(lang, viewport);
    await fillLogin(fresh, lang, reset);
    await fresh.getByRole('alert').waitFor();
    await fillLogin(fresh, lang, { email: reset.email, password: 'a second passphrase' });
    await fresh.waitForURL(`${ui.server.url}/console/`);
  });
});

describe.each([
  ['en', DESKTOP],
  ['en', PHONE],
  ['fr', DESKTOP],
  ['fr', PHONE],
] as [Lang, Viewport][])('the Keys page in %s at %o', (lang, viewport) => {
  const w = WORDS[lang];
  const tab = { locale: w.locale, viewport, permissions: CLIPBOARD };

  it('shows the list first, opens the create form on demand, and never scrolls sideways', async () => {
    const page = await signedIn(ui.browser, ui.server, ui.tabs, ADMIN, '/console/keys', tab);
    await page.getByRole('heading', { name: w.keys, level: 1 }).waitFor();
    await page
      .getByRole('region')
      .first()
      .or(page.getByText(lang === 'en' ? 'No key yet.' : 'Aucune clé pour l’instant.'))
      .first()
      .waitFor();
    expect(await page.getByRole('button', { name: w.createKey }).count()).toBe(0);
    expect(await page.getByLabel(w.keyName, { exact: true }).count()).toBe(0);
    await expectNoSidewaysScroll(page, viewport.width);
    await shot(page, 'keys', lang, viewport);

    await page.getByRole('button', { name: w.newKey }).click();
    const name = page.getByLabel(w.keyName, { exact: true });
    await name.waitFor();
    // A string: this file is compiled without the DOM library.
    expect(await page.evaluate('document.activeElement?.id')).toBe('key-name');
    await page.getByRole('button', { name: w.createKey }).waitFor();
    await expectNoSidewaysScroll(page, viewport.width);
    await shot(page, 'keys-form', lang, viewport);

    await name.fill(`Site ${lang} ${viewport.width}`);
    await page.getByRole('checkbox', { name: 'crm:read' }).check();
    await page.getByRole('button', { name: w.createKey }).click();
    await page.getByRole('button', { name: w.copy, exact: true }).waitFor();
    await page.getByRole('row', { name: new RegExp(`Site ${lang} ${viewport.width}`) }).waitFor();
    expect(await page.getByRole('button', { name: w.createKey }).count()).toBe(0);
    await expectNoSidewaysScroll(page, viewport.width);
    await shot(page, 'keys-created', lang, viewport);
  });
});
