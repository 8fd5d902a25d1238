import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ERROR_STATUS, type ValidationIssue } from '../../shared/errors.js';
import { toValidationIssues } from '../../server/platform/http/validation.js';
import type { Lang } from '../../renderer/src/i18n.js';
import { datePickerPattern, describeIssue, fieldNameOf } from '../../renderer/src/issues.js';
import { ERROR_SENTENCES, errorSentence, type ConsoleErrorCode } from '../../renderer/src/messages.js';

/** The console's wording of errors and validation problems (renderer/src/messages.ts, issues.ts): pure, both languages. */

const LANGS: readonly Lang[] = ['en', 'fr'];
const CODES: readonly ConsoleErrorCode[] = [
  ...(Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[]),
  'network_error',
  'unexpected_response',
];

/** Words of the API a broker should not have to read. */
const JARGON =
  /idempotency|csrf|\bhttp\b|\bscope\b|request_id|retry-after|\bjson\b|\bmcp\b|endpoint|header|cursor|payload|\bzod\b|dicData|\b[a-z]+_[a-z_]+\b/i;

/** The problems a real zod schema finds in a value, as the service sends them. */
function issuesOf(schema: z.ZodType, value: unknown, part = 'body'): ValidationIssue[] {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected a failure');
  return toValidationIssues(result.error, part, value);
}

function only(schema: z.ZodType, value: unknown): ValidationIssue {
  const [issue] = issuesOf(schema, value);
  return issue!;
}

describe('every error code has a sentence for a person, in French and in English', () => {
  it.each(LANGS)('%s: non-empty, not the code, no API jargon', (lang) => {
    for (const code of CODES) {
      const sentence = ERROR_SENTENCES[lang][code];
      expect(sentence.trim().length, code).toBeGreaterThan(10);
      expect(sentence, code).not.toContain(code);
      expect(sentence, code).not.toMatch(JARGON);
      expect(errorSentence({ error: code, message: 'The server’s English text' }, lang), code).toBe(sentence);
    }
  });

  it('the two languages differ (no English left in the French console)', () => {
    const same = CODES.filter((code) => ERROR_SENTENCES.fr[code] === ERROR_SENTENCES.en[code]);
    expect(same).toEqual([]);
  });

  it('keeps the service’s message only for a code it does not know', () => {
    expect(errorSentence({ error: 'some_future_code', message: 'Said by a newer service.' }, 'fr')).toBe('Said by a newer service.');
  });

  it('a validation_error lists its problems, worded, after the field’s name', () => {
    const details = issuesOf(z.object({ email: z.email(), bonus_malus: z.number().max(3.5) }), { email: 'nope', bonus_malus: 4 });
    expect(errorSentence({ error: 'validation_error', message: 'body.email: Invalid email address.', details }, 'en')).toBe(
      `${ERROR_SENTENCES.en.validation_error} email: this is not a valid email address. bonus malus: must be at most 3.5.`,
    );
    const fr = errorSentence({ error: 'validation_error', message: 'x', details }, 'fr');
    expect(fr).toContain('email : cette adresse e-mail n’est pas valable.');
    expect(fr).toContain('bonus malus : doit valoir au plus 3,5.');
    expect(fr).not.toContain('Invalid');
  });

  it('says how long to wait when the service said it (Retry-After), and who paused the robots', () => {
    expect(errorSentence({ error: 'too_many_login_attempts', message: 'x' }, 'en', 600)).toBe(
      'Too many failed sign-ins. Try again in 10 min.',
    );
    expect(errorSentence({ error: 'too_many_login_attempts', message: 'x' }, 'fr', 61)).toBe(
      'Trop de connexions ont échoué. Réessayez dans 2 min.',
    );
    expect(errorSentence({ error: 'rate_limited', message: 'x' }, 'en', 5)).toBe('Too many requests in a short time. Try again in 1 min.');
    expect(errorSentence({ error: 'api_rpa_temporarily_disabled', message: 'x', details: { scope: 'cabinet' } }, 'fr')).toContain(
      'Un administrateur peut les relancer',
    );
    expect(errorSentence({ error: 'api_rpa_temporarily_disabled', message: 'x', details: { scope: 'install' } }, 'en')).toBe(
      ERROR_SENTENCES.en.api_rpa_temporarily_disabled,
    );
  });

  it('gives the reference of an unexpected failure', () => {
    expect(errorSentence({ error: 'internal_error', message: 'x', request_id: 'req-42' }, 'en')).toBe(
      `${ERROR_SENTENCES.en.internal_error} Reference: req-42.`,
    );
    expect(errorSentence({ error: 'internal_error', message: 'x', request_id: 'req-42' }, 'fr')).toBe(
      `${ERROR_SENTENCES.fr.internal_error} Référence : req-42.`,
    );
  });
});

describe('describeIssue: each kind of zod problem, worded for the field', () => {
  const usage = z.enum(['prive', 'professionnel', 'mixte']);
  const labels = { prive: 'Privé', professionnel: 'Professionnel', mixte: 'Mixte' };

  it('a number over its maximum, under its minimum', () => {
    const over = only(z.object({ n: z.number().min(0.5).max(3.5) }), { n: 4 });
    expect(over).toMatchObject({ path: 'body.n', code: 'too_big', maximum: 3.5, inclusive: true, origin: 'number' });
    expect(describeIssue(over, 'en')).toBe('Must be at most 3.5.');
    expect(describeIssue(over, 'fr')).toBe('Doit valoir au plus 3,5.');
    const under = only(z.object({ n: z.number().min(0.5) }), { n: 0.1 });
    expect(describeIssue(under, 'en')).toBe('Must be at least 0.5.');
    expect(describeIssue(under, 'fr')).toBe('Doit valoir au moins 0,5.');
    expect(describeIssue(only(z.object({ n: z.number().gt(0) }), { n: 0 }), 'en')).toBe('Must be more than 0.');
    expect(describeIssue(only(z.object({ n: z.number().lt(10) }), { n: 10 }), 'fr')).toBe('Doit valoir moins de 10.');
  });

  it('a choice: the labels when known, else the values', () => {
    const issue = only(z.object({ usage }), { usage: 'x' });
    expect(issue).toMatchObject({ code: 'invalid_value', values: ['prive', 'professionnel', 'mixte'] });
    expect(describeIssue(issue, 'en', { valueLabels: labels })).toBe('Choose one of: Privé, Professionnel, Mixte.');
    expect(describeIssue(issue, 'fr', { valueLabels: labels })).toBe('Choisissez parmi : Privé, Professionnel, Mixte.');
    expect(describeIssue(issue, 'en')).toBe('Choose one of: prive, professionnel, mixte.');
    expect(describeIssue(only(z.object({ ok: z.literal(true) }), { ok: false }), 'fr')).toBe('Choisissez parmi : Oui.');
  });

  it('formats: email, web address, identifier, date, a pattern with its example', () => {
    expect(describeIssue(only(z.object({ e: z.email() }), { e: 'x' }), 'en')).toBe('This is not a valid email address.');
    expect(describeIssue(only(z.object({ e: z.email() }), { e: 'x' }), 'fr')).toBe('Cette adresse e-mail n’est pas valable.');
    expect(describeIssue(only(z.object({ u: z.url() }), { u: 'x' }), 'en')).toBe('This is not a valid web address.');
    expect(describeIssue(only(z.object({ id: z.uuid() }), { id: 'x' }), 'fr')).toBe('Cet identifiant n’est pas valable.');
    expect(describeIssue(only(z.object({ d: z.iso.date() }), { d: '2024-13-01' }), 'en')).toBe('Enter a valid date.');
    expect(describeIssue(only(z.object({ d: z.iso.datetime() }), { d: 'x' }), 'fr')).toBe('Saisissez une date et une heure valables.');
    const postcode = only(z.object({ p: z.string().regex(/^\d{5}$/, 'five digits') }), { p: '123' });
    expect(postcode).toMatchObject({ code: 'invalid_format', format: 'regex', pattern: String(/^\d{5}$/) });
    expect(describeIssue(postcode, 'fr', { example: '69003' })).toBe('Le format n’est pas celui attendu (par exemple : 69003).');
    expect(describeIssue(postcode, 'en')).toBe('This is not in the expected form.');
  });

  it('missing fields and wrong types', () => {
    const missing = only(z.object({ name: z.string() }), {});
    expect(missing).toMatchObject({ code: 'invalid_type', expected: 'string', received: 'undefined' });
    expect(describeIssue(missing, 'en')).toBe('This field is required.');
    expect(describeIssue(missing, 'fr')).toBe('Ce champ est obligatoire.');
    expect(describeIssue(only(z.object({ n: z.number() }), { n: 'abc' }), 'en')).toBe('Enter a number.');
    expect(describeIssue(only(z.object({ n: z.int() }), { n: 2.5 }), 'fr')).toBe('Saisissez un nombre entier.');
    expect(describeIssue(only(z.object({ b: z.boolean() }), { b: 'yes' }), 'en')).toBe('Choose yes or no.');
    expect(describeIssue(only(z.object({ s: z.string() }), { s: 3 }), 'fr')).toBe('Saisissez un texte.');
    expect(describeIssue(only(z.object({ o: z.object({}) }), { o: 3 }), 'en')).toBe('This value is not of the right kind.');
  });

  it('lengths of text and of lists', () => {
    expect(describeIssue(only(z.object({ s: z.string().min(1) }), { s: '' }), 'en')).toBe('This field cannot be empty.');
    expect(describeIssue(only(z.object({ s: z.string().min(2) }), { s: 'a' }), 'fr')).toBe('Saisissez au moins 2 caractères.');
    expect(describeIssue(only(z.object({ s: z.string().max(80) }), { s: 'a'.repeat(81) }), 'en')).toBe('Enter at most 80 characters.');
    expect(describeIssue(only(z.object({ a: z.array(z.string()).min(1) }), { a: [] }), 'en')).toBe('Choose at least one.');
    expect(describeIssue(only(z.object({ a: z.array(z.string()).max(2) }), { a: ['a', 'b', 'c'] }), 'fr')).toBe('Choisissez-en au plus 2.');
  });

  it('multiples, unexpected keys, unions and the service’s own rules', () => {
    expect(describeIssue(only(z.object({ n: z.number().multipleOf(5) }), { n: 7 }), 'en')).toBe('Must be a multiple of 5.');
    const strict = only(z.strictObject({ a: z.string() }), { a: 'x', extra: 1 });
    expect(strict).toMatchObject({ code: 'unrecognized_keys', keys: ['extra'] });
    expect(describeIssue(strict, 'fr')).toBe('Informations inattendues : extra.');
    expect(describeIssue(only(z.object({ u: z.union([z.number(), z.boolean()]) }), { u: 'x' }), 'en')).toBe('This value is not accepted.');
    const refined = only(
      z.object({ a: z.string() }).refine(() => false, { message: 'Give vehicle_make and vehicle_model, or registration.', path: ['a'] }),
      { a: 'x' },
    );
    expect(refined.code).toBe('custom');
    expect(describeIssue(refined, 'fr')).toBe('Cette valeur n’est pas acceptée.');
    // A check the service words itself carries no code.
    expect(describeIssue({ path: 'body.client_id', message: 'no client with id 1 in this cabinet' }, 'en')).toBe(
      'This value is not accepted.',
    );
  });

  it('never gives zod’s text or an empty sentence, whatever the issue', () => {
    const zodText = /expected (number|string|one of)|received|Invalid (input|option|email)|Too (big|small)|[<>]=/;
    // What the sentence may quote (a field's name, an unexpected key, an allowed value, the example) is the caller's or ours, never zod's words.
    const text = (options: { minLength?: number } = {}) => fc.string(options).filter((t) => !zodText.test(t));
    const primitive = fc.oneof(text(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null));
    const issue = fc.record(
      {
        path: text(),
        message: fc.constantFrom(
          'Too big: expected number to be <=3.5',
          'Invalid option: expected one of "a"|"b"',
          'Invalid email address',
          'Invalid input: expected string, received undefined',
          'Too small: expected string to have >=2 characters',
          'Invalid input',
        ),
        code: fc.constantFrom(
          'invalid_type',
          'too_small',
          'too_big',
          'invalid_format',
          'invalid_value',
          'not_multiple_of',
          'unrecognized_keys',
          'invalid_union',
          'invalid_key',
          'invalid_element',
          'custom',
          'something_new',
        ),
        expected: fc.constantFrom('string', 'number', 'int', 'boolean', 'object', 'array', 'date', 'nan'),
        received: fc.constantFrom('undefined', 'string', 'number', 'null'),
        origin: fc.constantFrom('number', 'int', 'string', 'array', 'set', 'date', 'bigint', 'file'),
        minimum: fc.double({ noNaN: true, min: -1e12, max: 1e12 }),
        maximum: fc.double({ noNaN: true, min: -1e12, max: 1e12 }),
        inclusive: fc.boolean(),
        format: fc.constantFrom('email', 'url', 'uuid', 'date', 'datetime', 'time', 'regex', 'starts_with', 'cidrv4'),
        values: fc.array(primitive, { maxLength: 5 }),
        divisor: fc.double({ noNaN: true, min: 0.001, max: 1000 }),
        keys: fc.array(text({ minLength: 1 }), { maxLength: 3 }),
      },
      { requiredKeys: ['path', 'message'] },
    );
    fc.assert(
      fc.property(issue, fc.constantFrom<Lang>('en', 'fr'), fc.option(text(), { nil: undefined }), (i, lang, example) => {
        const sentence = describeIssue(i, lang, { example });
        expect(sentence.trim()).not.toBe('');
        expect(sentence).not.toContain(i.message);
        expect(sentence).not.toMatch(zodText);
      }),
      { numRuns: 500 },
    );
  });
});

describe('fieldNameOf and the date picker’s hint', () => {
  it('names the field a path points at', () => {
    expect(fieldNameOf('body.dicData.bonus_malus')).toBe('bonus malus');
    expect(fieldNameOf('body.email')).toBe('email');
    expect(fieldNameOf('body.events.2')).toBe('events');
    expect(fieldNameOf('query.limit')).toBe('limit');
    expect(fieldNameOf('body')).toBe('');
  });

  it('gives the order of the browser’s picker in the console’s letters', () => {
    expect(datePickerPattern('fr', 'fr-FR')).toBe('jj/mm/aaaa');
    expect(datePickerPattern('en', 'en-GB')).toBe('dd/mm/yyyy');
    expect(datePickerPattern('en', 'en-US')).toBe('mm/dd/yyyy');
    expect(datePickerPattern('fr', 'en-US')).toBe('mm/jj/aaaa');
    expect(datePickerPattern('en', 'de-DE')).toBe('dd.mm.yyyy');
    expect(datePickerPattern('fr', 'not a locale!')).toBe('jj/mm/aaaa');
  });
});
