// @module-tag browser
import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { eventEnvelopeSchema } from '../../shared/events.js';
import { verifyWebhook } from '../../shared/verify-webhook.js';
import { hashPassword } from '../../server/tenancy/passwords.js';
import { insertUser } from '../../server/tenancy/store.js';
import { openConsole, saveScreenshot } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { createUser, type TestUser } from '../helpers/oauth.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/**
 * The webhooks page of the built console in real Chromium, against the real app delivering to a
 * real HTTPS receiver: create (secret once), test, history, replay, pause, rotate, edit, delete.
 */

const PATH = '/console/webhooks';

let receiver: Receiver;
let admin: TestUser;
afterAll(() => receiver?.close());
/** The tabs of a test, closed after it: its script errors, console errors and CSP violations fail it. */
const ui = useConsoleBrowser({
  server: async () => {
    receiver = await startReceiver();
    return { config: { webhookAllowPrivateTargets: true }, webhooks: { extraCa: [receiver.ca] } };
  },
  timeout: 5_000,
});

beforeAll(async () => {
  admin = await createUser(ui.server, 'Cabinet Dupont & Associés');
});
beforeEach(() => {
  receiver.received.length = 0;
});
afterEach(() => {
  ui.server.deps.db.sqlite.prepare('DELETE FROM webhook_subscriptions').run();
});

/** Signed in on the page, watched for script errors, console errors and CSP violations from its (re)load on. */
async function open(user: { email: string; password: string }, locale = 'en-GB', allowed: RegExp[] = []): Promise<Page> {
  const page = ui.watch(await openConsole(ui.browser, ui.server, user, PATH, locale), (text) => allowed.some((re) => re.test(text)));
  await page.reload();
  return page;
}

function row(name: string): Record<string, unknown> | undefined {
  return ui.server.deps.db.sqlite.prepare('SELECT * FROM webhook_subscriptions WHERE url = ?').get(name) as
    Record<string, unknown> | undefined;
}

it('creates a webhook to a real HTTPS receiver, tests it, replays the delivery, pauses, rotates, edits and deletes it', async () => {
  const page = await open(admin);
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  await page.getByText('No webhook yet').waitFor();
  await saveScreenshot(page, 'webhooks-empty');

  // The list comes first: the form opens on demand.
  expect(await page.getByLabel('Endpoint URL').count()).toBe(0);
  await page.getByRole('button', { name: 'New webhook' }).click();
  // Create: a missing event is refused on the page, next to the events.
  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByLabel('Description').fill('CRM Dupont');
  await page.getByRole('button', { name: 'Create webhook' }).click();
  const events = page.getByRole('group', { name: 'Events' });
  await events.getByText('Choose at least one event').waitFor();
  expect(await events.getAttribute('aria-invalid')).toBe('true');
  await page.getByLabel('opportunity.created', { exact: true }).check();
  await page.getByLabel('devis.signed', { exact: true }).check();
  await page.getByRole('button', { name: 'Create webhook' }).click();

  // The secret, once.
  const secretField = page.getByLabel('Signing secret', { exact: true });
  await secretField.waitFor();
  const secret = await secretField.inputValue();
  expect(secret).toMatch(/^whsec_[0-9A-Za-z]{40}$/);
  expect(await secretField.getAttribute('readonly')).not.toBeNull();
  await page.getByText('it will not be shown again').waitFor();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.server.url });
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied to the clipboard.').waitFor();
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
  const card = page.getByRole('region', { name: receiver.url, exact: true });
  await card.waitFor();
  expect(await card.textContent()).toContain('opportunity.created');
  expect(await card.textContent()).toContain('Active');
  await saveScreenshot(page, 'webhooks-created');
  await page.getByRole('button', { name: 'I have stored it' }).click();
  await secretField.waitFor({ state: 'detached' });
  await page.reload();
  await card.waitFor();
  expect(await page.content()).not.toContain(secret);

  // Send test: a correctly signed webhook.test reaches the receiver; the history shows it with its attempt.
  await card.getByRole('button', { name: 'Send test' }).click();
  await card.getByText(/Test delivered: HTTP 200/).waitFor();
  const [test] = await receiver.waitFor(1);
  expect(verifyWebhook(test!.rawBody, test!.headers, [secret])).toMatchObject({ valid: true });
  const envelope = eventEnvelopeSchema.parse(JSON.parse(test!.rawBody));
  expect(envelope).toMatchObject({ type: 'webhook.test', cabinet_id: admin.cabinetId });
  const history = card.getByRole('table');
  await history.getByText('webhook.test').waitFor();
  await history.getByText(/HTTP 200 · \d+ ms/).waitFor();
  expect(await history.getByText('Succeeded').count()).toBe(1);
  await saveScreenshot(page, 'webhooks-tested');

  // Replay: a second delivery of the same event reaches the receiver and appears with its own attempt.
  await history.getByRole('button', { name: /^Replay webhook\.test/ }).click();
  const [, replayed] = await receiver.waitFor(2);
  expect(verifyWebhook(replayed!.rawBody, replayed!.headers, [secret])).toMatchObject({ valid: true });
  expect(JSON.parse(replayed!.rawBody).id).toBe(envelope.id);
  expect(replayed!.headers['service-delivery-id']).not.toBe(test!.headers['service-delivery-id']);
  await history
    .getByText(/HTTP 200 · \d+ ms/)
    .nth(1)
    .waitFor();
  expect(await history.getByRole('row').count()).toBe(3); // the header and two deliveries
  await history.getByText('Resent copy', { exact: true }).waitFor();
  await saveScreenshot(page, 'webhooks-replayed');

  // Pause and resume.
  await card.getByRole('button', { name: 'Pause' }).click();
  await card.getByRole('button', { name: 'Resume' }).waitFor();
  await card.getByText('Paused', { exact: true }).waitFor();
  expect(row(receiver.url)?.active).toBe(0);
  await saveScreenshot(page, 'webhooks-paused');
  await card.getByRole('button', { name: 'Resume' }).click();
  await card.getByRole('button', { name: 'Pause' }).waitFor();
  expect(row(receiver.url)?.active).toBe(1);

  // Rotate: the new secret once; with the overlap, deliveries are signed by both.
  await card.getByRole('button', { name: 'Rotate secret' }).click();
  const rotateDialog = page.getByRole('dialog', { name: 'Rotate the signing secret' });
  await rotateDialog.getByLabel('Previous secret keeps signing for').selectOption({ label: '1 hour' });
  await saveScreenshot(page, 'webhooks-rotate-dialog');
  await rotateDialog.getByRole('button', { name: 'Rotate the secret' }).click();
  const newSecretField = card.getByLabel('New signing secret');
  const newSecret = await newSecretField.inputValue();
  expect(newSecret).toMatch(/^whsec_/);
  expect(newSecret).not.toBe(secret);
  await card.getByText(/deliveries carry two signatures/).waitFor();
  await saveScreenshot(page, 'webhooks-rotated');
  await card.getByRole('button', { name: 'I have stored it' }).click();
  await card.getByRole('button', { name: 'Send test' }).click();
  const [, , afterRotation] = await receiver.waitFor(3);
  expect(verifyWebhook(afterRotation!.rawBody, afterRotation!.headers, [newSecret]).valid).toBe(true);
  expect(verifyWebhook(afterRotation!.rawBody, afterRotation!.headers, [secret]).valid).toBe(true);

  // Edit the events: All events.
  await card.getByRole('button', { name: 'Edit' }).click();
  await card.getByLabel('All events').check();
  await card.getByRole('button', { name: 'Save' }).click();
  await card.getByText('Changes saved.').waitFor();
  expect(JSON.parse(String(row(receiver.url)?.events))).toEqual(['*']);

  // Delete, after confirming.
  await card.getByRole('button', { name: 'Delete' }).click();
  const deleteDialog = page.getByRole('dialog', { name: 'Delete this webhook?' });
  await deleteDialog.waitFor();
  await saveScreenshot(page, 'webhooks-delete-confirm');
  await deleteDialog.getByRole('button', { name: 'Cancel' }).click();
  await deleteDialog.waitFor({ state: 'detached' });
  expect(row(receiver.url)).toBeDefined();
  await card.getByRole('button', { name: 'Delete' }).click();
  await deleteDialog.getByRole('button', { name: 'Delete the webhook' }).click();
  await card.waitFor({ state: 'detached' });
  await page.getByText(`Webhook ${receiver.url} deleted.`).waitFor();
  expect(row(receiver.url)).toBeUndefined();
  await saveScreenshot(page, 'webhooks-deleted');
});

it('speaks French: create, secret, test', async () => {
  const page = await open(admin, 'fr-FR');
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Nouveau webhook' }).click();
  await page.getByRole('button', { name: 'Créer le webhook' }).click();
  await page.getByText('Saisissez l’URL de destination').waitFor();
  expect(await page.getByLabel('URL de destination').getAttribute('aria-invalid')).toBe('true');
  await page.getByLabel('URL de destination').fill(receiver.url);
  await page.getByLabel('Tous les événements').check();
  expect(await page.getByLabel('opportunity.created', { exact: true }).isDisabled()).toBe(true);
  await page.getByRole('button', { name: 'Créer le webhook' }).click();
  const secret = await page.getByLabel('Secret de signature', { exact: true }).inputValue();
  await page.getByText('il ne sera plus affiché').waitFor();
  const card = page.getByRole('region', { name: receiver.url, exact: true });
  await card.getByText('Actif', { exact: true }).waitFor();
  await card.getByRole('button', { name: 'Envoyer un test' }).click();
  await card.getByText(/Test reçu : HTTP 200/).waitFor();
  await card.getByRole('table').getByText('Réussi').waitFor();
  await card.getByRole('button', { name: /^Renvoyer webhook\.test/ }).waitFor();
  const [delivery] = await receiver.waitFor(1);
  expect(verifyWebhook(delivery!.rawBody, delivery!.headers, [secret]).valid).toBe(true);
  await saveScreenshot(page, 'webhooks-fr');
});

it('is not offered to a broker, and refused if opened', async () => {
  const email = `broker-${randomUUID()}@example.fr`;
  const password = 'correct horse battery';
  insertUser(ui.server.deps.db.orm, {
    id: randomUUID(),
    cabinetId: admin.cabinetId,
    email,
    passwordHash: await hashPassword(password, randomBytes(16)),
    role: 'broker',
    createdAt: Date.now(),
  });
  // The 403 of the list is expected here; Chromium reports any failed fetch as a console error.
  const page = await open({ email, password }, 'en-GB', [/status of 403/]);
  expect(await page.getByRole('alert').textContent()).toContain('Only an administrator');
  expect(await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
  await saveScreenshot(page, 'webhooks-broker');
});
