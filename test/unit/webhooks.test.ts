import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Client } from '../../shared/crm.js';
import type { Devis } from '../../shared/devis.js';
import { EVENT_TYPES } from '../../shared/events.js';
import { maskPersonalData, PERSONAL_DATA, type PayloadKind, type PersonalData } from '../../shared/masking.js';
import { signWebhookPayload, verifyWebhook } from '../../shared/verify-webhook.js';
import { jsonDepthExceeds } from '../../server/platform/http/json-body.js';
import { decryptSecret, encryptSecret } from '../../server/secrets/cipher.js';
import { createTargetGuard, BlockedTargetError } from '../../server/webhooks/target.js';
import { subscribesTo } from '../../server/webhooks/service.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const T = NOW / 1000;
const body = '{"id":"e1","type":"job.completed"}';

describe('verifyWebhook', () => {
  const secret = 'whsec_abc';
  const header = (t: number, ...secrets: string[]) => ({
    'Service-Signature': [`t=${t}`, ...secrets.map((s) => `v1=${signWebhookPayload(s, t, body)}`)].join(','),
  });

  it('accepts a valid signature, from a plain object or a Headers instance', () => {
    expect(verifyWebhook(body, header(T, secret), [secret], { now: NOW })).toEqual({ valid: true, timestamp: T });
    expect(verifyWebhook(Buffer.from(body), new Headers(header(T, secret)), [secret], { now: NOW }).valid).toBe(true);
  });

  it('accepts when any v1 matches any secret (rotation)', () => {
    expect(verifyWebhook(body, header(T, 'whsec_new', 'whsec_old'), ['whsec_old'], { now: NOW }).valid).toBe(true);
    expect(verifyWebhook(body, header(T, 'whsec_new', 'whsec_old'), ['whsec_other', 'whsec_new'], { now: NOW }).valid).toBe(true);
  });

  it('refuses a timestamp more than 300 s away, a changed body, a wrong secret, a malformed header', () => {
    expect(verifyWebhook(body, header(T - 301, secret), [secret], { now: NOW })).toEqual({
      valid: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(verifyWebhook(body, header(T + 301, secret), [secret], { now: NOW }).valid).toBe(false);
    expect(verifyWebhook(body, header(T - 300, secret), [secret], { now: NOW }).valid).toBe(true);
    expect(verifyWebhook(`${body} `, header(T, secret), [secret], { now: NOW })).toEqual({ valid: false, reason: 'no_matching_signature' });
    expect(verifyWebhook(body, header(T, secret), ['whsec_other'], { now: NOW }).valid).toBe(false);
    expect(verifyWebhook(body, {}, [secret], { now: NOW })).toEqual({ valid: false, reason: 'missing_signature' });
    expect(verifyWebhook(body, { 'service-signature': 'v1=abc' }, [secret], { now: NOW })).toEqual({
      valid: false,
      reason: 'malformed_signature',
    });
  });

  it('never accepts a signature made over another body (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        fc.pre(a !== b);
        const signed = { 'service-signature': `t=${T},v1=${signWebhookPayload(secret, T, a)}` };
        expect(verifyWebhook(b, signed, [secret], { now: NOW }).valid).toBe(false);
        expect(verifyWebhook(a, signed, [secret], { now: NOW }).valid).toBe(true);
      }),
    );
  });
});

describe('personal-data masking', () => {
  const person = {
    id: 'c1',
    type: 'person',
    last_name: 'Dupont',
    first_name: 'Jean',
    company_name: null,
    siret: '73282932000074',
    email: 'jd@x.fr',
    phone: '0612345678',
    address: { line1: '3 rue X', line2: null, postcode: '69003', city: 'Lyon', country: 'FR' },
    birth_date: '1980-01-01',
  };

  it('masks names, email, phone, birth date, address lines and an individual’s SIRET; keeps companies, amounts and ids', () => {
    expect(maskPersonalData('client', person)).toEqual({
      id: 'c1',
      type: 'person',
      last_name: 'D***',
      first_name: 'J***',
      company_name: null,
      siret: '7***',
      email: 'j***',
      phone: '0***',
      address: { line1: '3***', line2: null, postcode: '6***', city: 'L***', country: 'FR' },
      birth_date: '1***',
    });
    const company = { ...person, type: 'company', last_name: null, first_name: null, birth_date: null, company_name: 'ACME' };
    expect(maskPersonalData('client', company)).toMatchObject({ company_name: 'ACME', siret: '73282932000074', email: 'j***' });
    const page = { data: [person, company], next_cursor: 'abc', has_more: true, count: 2 };
    expect(maskPersonalData('client_page', page)).toMatchObject({
      data: [
        { last_name: 'D***', siret: '7***' },
        { company_name: 'ACME', siret: '73282932000074' },
      ],
      next_cursor: 'abc',
      count: 2,
    });
    const created = {
      opportunity_id: 'o1',
      title: 'Auto',
      expected_value_eur: 1200,
      contact: { last_name: 'Dupont', company_name: null, siret: '73282932000074' },
    };
    expect(maskPersonalData('opportunity.created', created)).toEqual({
      ...created,
      contact: { last_name: 'D***', company_name: null, siret: '7***' },
    });
  });

  it('masks client.updated as the client resource, keeping changed_fields; client.erased carries nothing to mask', () => {
    const updated = { ...person, client_id: 'c1', changed_fields: ['last_name', 'email'] };
    expect(maskPersonalData('client.updated', updated)).toEqual({
      ...maskPersonalData('client', person),
      client_id: 'c1',
      changed_fields: ['last_name', 'email'],
    });
    const erased = { client_id: 'c1', erased_at: '2026-11-22T12:00:00.000Z' };
    expect(maskPersonalData('client.erased', erased)).toEqual(erased);
  });

  it('masks free text whole and every string of dicData, whatever its keys; numbers and booleans stay', () => {
    const devis = {
      devis_id: 'd1',
      tarif_eur: 432.1,
      suspens: 'Relevé d’information de M. Dupont',
      dicData: {
        registration: 'AB-123-CD',
        policy_number: 'POL-42',
        postcode: '69003',
        driver: { name: 'Jean' },
        vehicle_value_eur: 12000,
        garaged: true,
      },
    };
    expect(maskPersonalData('devis', devis)).toEqual({
      devis_id: 'd1',
      tarif_eur: 432.1,
      suspens: '***',
      dicData: {
        registration: 'A***',
        policy_number: 'P***',
        postcode: '6***',
        driver: { name: 'J***' },
        vehicle_value_eur: 12000,
        garaged: true,
      },
    });
    const job = {
      job_id: 'j1',
      result: null,
      error: { code: 'risk_declined', message: 'Refused for Jean Dupont', technical: false },
      mfa: { challenge: 'SMS sent to 06 12 34 56 78' },
    };
    expect(maskPersonalData('job', job)).toEqual({ ...job, error: { ...job.error, message: '***' }, mfa: { challenge: '***' } });
    expect(maskPersonalData('job.mfa_required', { job_id: 'j1', challenge: 'SMS to 06 12' })).toEqual({ job_id: 'j1', challenge: '***' });
    expect(maskPersonalData('devis.failed', { devis_id: 'd1', reason: 'Declined: Dupont' })).toEqual({ devis_id: 'd1', reason: '***' });
  });

  it('masks a payload of a kind the list does not know whole, never passes it through', () => {
    const unknownKind = 'opportunity.merged' as PayloadKind;
    expect(maskPersonalData(unknownKind, { id: 'o1', note: 'Dupont', amount: 3 })).toEqual({ id: '***', note: '***', amount: 3 });
  });

  it('lists every payload kind, and a path that names no field of its payload is a type error', () => {
    for (const type of EVENT_TYPES) expect(PERSONAL_DATA).toHaveProperty([type]);
    // @ts-expect-error address.street is not a field of Client
    const wrong: PersonalData<Client> = { 'address.street': 'initial' };
    // @ts-expect-error dicData's keys are unknown: dicData.* or nothing
    const guessed: PersonalData<Devis> = { 'dicData.postcode': 'initial' };
    expect([wrong, guessed]).toHaveLength(2);
  });
});

describe('webhook target guard', () => {
  const resolve = async (host: string) =>
    host === 'public.example.com' ? [{ address: '93.184.216.34', family: 4 as const }] : [{ address: '10.0.0.1', family: 4 as const }];
  const guard = createTargetGuard({ resolve, allowPrivate: false });

  it('lets public addresses through and refuses every private, loopback, link-local or metadata one', async () => {
    await expect(guard(new URL('https://public.example.com/h'))).resolves.toEqual({ address: '93.184.216.34', family: 4 });
    for (const url of [
      'https://127.0.0.1/',
      'https://127.8.9.10/',
      'https://10.0.0.1/',
      'https://172.16.5.4/',
      'https://192.168.0.1/',
      'https://169.254.169.254/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://[::1]/',
      'https://[fe80::1]/',
      'https://[fd12:3456::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://internal.example.com/',
    ]) {
      await expect(guard(new URL(url)), url).rejects.toBeInstanceOf(BlockedTargetError);
    }
  });

  it('allows them all when private targets are allowed', async () => {
    const open = createTargetGuard({ resolve, allowPrivate: true });
    await expect(open(new URL('https://127.0.0.1/'))).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });
});

describe('small pieces', () => {
  it('encrypts secrets with AES-256-GCM and detects tampering', () => {
    const key = randomBytes(32);
    const sealed = encryptSecret(key, 'whsec_secret');
    expect(sealed).not.toContain('whsec_secret');
    expect(decryptSecret(key, sealed)).toBe('whsec_secret');
    const [v, iv, tag, data = ''] = sealed.split('.');
    expect(() => decryptSecret(key, [v, iv, tag, `${data.slice(0, -2)}AA`].join('.'))).toThrow();
    expect(() => decryptSecret(randomBytes(32), sealed)).toThrow();
  });

  it('"*" covers every type but webhook.test', () => {
    expect(subscribesTo(['*'], 'job.failed')).toBe(true);
    expect(subscribesTo(['*'], 'webhook.test')).toBe(false);
    expect(subscribesTo(['webhook.test'], 'webhook.test')).toBe(true);
    expect(subscribesTo(['job.failed'], 'job.completed')).toBe(false);
  });

  it('measures JSON nesting, ignoring brackets inside strings', () => {
    expect(jsonDepthExceeds('[[[1]]]', 3)).toBe(false);
    expect(jsonDepthExceeds('[[[[1]]]]', 3)).toBe(true);
    expect(jsonDepthExceeds(`{"a":"${'['.repeat(100)}"}`, 3)).toBe(false);
    expect(jsonDepthExceeds(`{"a":"\\"[[[["}`, 1)).toBe(false);
    expect(jsonDepthExceeds(`{"a":"\\\\"[[[["}`, 3)).toBe(true);
  });

  it('measures nesting as a walk of every character does, on any text, escapes and unterminated strings included', () => {
    const charByChar = (text: string, limit: number) => {
      let depth = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === '\\') i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '[' || c === '{') {
          if (++depth > limit) return true;
        } else if (c === ']' || c === '}') depth--;
      }
      return false;
    };
    const text = fc.oneof(fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', ',') }), fc.json({ maxDepth: 6 }));
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 6 }), (json, limit) => jsonDepthExceeds(json, limit) === charByChar(json, limit)),
      { numRuns: 2000 },
    );
  });
});
