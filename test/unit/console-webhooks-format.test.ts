import { describe, expect, it } from 'vitest';
import type { ConsoleWebhook } from '../../shared/console-webhooks.js';
import { describeAttempt, subscriptionHealth } from '../../renderer/src/pages/webhooks/format.js';

/** The webhooks page's pure wording (renderer/src/pages/webhooks/format.ts): a failed attempt in words, and the badge. */

const URL_ = 'https://example.invalid/hook';
const HOOK = 'https://hooks.example.com/courtier';

function failed(error: string | null, http_status: number | null = null) {
  return { error, http_status };
}

describe('describeAttempt: what went wrong, for a person', () => {
  it('a name that does not exist, as the dispatcher records it', () => {
    expect(describeAttempt('en', URL_, failed('network_error: getaddrinfo ENOTFOUND example.invalid'))).toBe(
      'The address example.invalid does not exist: no server has this name. Check the URL.',
    );
    expect(describeAttempt('fr', URL_, failed('network_error: getaddrinfo ENOTFOUND example.invalid'))).toBe(
      'L’adresse example.invalid n’existe pas : aucun serveur ne porte ce nom. Vérifiez l’URL.',
    );
    expect(describeAttempt('en', URL_, failed('network_error: example.invalid did not resolve'))).toContain(
      'The address example.invalid does not exist',
    );
    expect(describeAttempt('fr', URL_, failed('network_error: getaddrinfo EAI_AGAIN example.invalid'))).toContain(
      'n’a pas pu être recherché',
    );
  });

  it('refused, cut, unreachable, too slow', () => {
    expect(describeAttempt('en', HOOK, failed('ECONNREFUSED: connect ECONNREFUSED 203.0.113.7:443'))).toBe(
      'hooks.example.com refused the connection: nothing is listening at this address. Check the URL and that the receiving server is running.',
    );
    expect(describeAttempt('fr', HOOK, failed('ECONNREFUSED: connect ECONNREFUSED 203.0.113.7:443'))).toContain('a refusé la connexion');
    expect(describeAttempt('en', HOOK, failed('ECONNRESET: socket hang up'))).toBe(
      'The connection to hooks.example.com was cut before it answered.',
    );
    expect(describeAttempt('en', HOOK, failed('EHOSTUNREACH: connect EHOSTUNREACH 203.0.113.7:443'))).toContain('cannot be reached');
    expect(describeAttempt('en', HOOK, failed('timeout'))).toBe('hooks.example.com did not answer in time.');
    expect(describeAttempt('fr', HOOK, failed('timeout'))).toBe('hooks.example.com n’a pas répondu à temps.');
  });

  it('certificate problems', () => {
    expect(describeAttempt('en', HOOK, failed('CERT_HAS_EXPIRED: certificate has expired'))).toBe(
      'The security certificate of hooks.example.com has expired: its owner must renew it.',
    );
    expect(describeAttempt('fr', HOOK, failed('DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate'))).toBe(
      'Le certificat de sécurité de hooks.example.com ne vient pas d’une autorité de confiance.',
    );
    expect(describeAttempt('en', HOOK, failed('UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate'))).toContain(
      'not from a trusted authority',
    );
    expect(
      describeAttempt('en', HOOK, failed("ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames")),
    ).toContain('made for another name');
    expect(describeAttempt('en', HOOK, failed('EPROTO: write EPROTO wrong version number'))).toBe(
      'No secure (https) connection could be set up with hooks.example.com.',
    );
  });

  it('a private address, a purged event, anything else', () => {
    expect(
      describeAttempt(
        'en',
        HOOK,
        failed('blocked_target: hooks.example.com resolves to 10.0.0.5, a private, loopback or link-local address'),
      ),
    ).toContain('inside a private network');
    expect(describeAttempt('fr', HOOK, failed('event_purged: the event is older than the retention period'))).toContain(
      'durée de conservation',
    );
    const other = describeAttempt('en', HOOK, failed('ERR_SOMETHING_NEW: what'));
    expect(other).toBe('The connection to hooks.example.com failed before it answered.');
  });

  it('the receiver’s answer other than 2xx, and nothing for a success', () => {
    expect(describeAttempt('en', HOOK, failed(null, 500))).toBe('hooks.example.com had an error on its side (500).');
    expect(describeAttempt('fr', HOOK, failed(null, 502))).toBe('hooks.example.com a eu une erreur de son côté (502).');
    expect(describeAttempt('en', HOOK, failed(null, 404))).toContain('this address does not exist (404)');
    expect(describeAttempt('en', HOOK, failed(null, 401))).toContain('refused the delivery (401)');
    expect(describeAttempt('en', HOOK, failed(null, 301))).toContain('redirect (301)');
    expect(describeAttempt('fr', HOOK, failed(null, 429))).toContain('demande d’attendre (429)');
    expect(describeAttempt('en', HOOK, failed(null, 422))).toBe('hooks.example.com refused the delivery (422).');
    expect(describeAttempt('en', HOOK, failed(null, 200))).toBeNull();
    expect(describeAttempt('en', HOOK, failed(null, 204))).toBeNull();
  });

  it('never shows the raw error text', () => {
    for (const raw of [
      'network_error: getaddrinfo ENOTFOUND example.invalid',
      'ECONNREFUSED: connect ECONNREFUSED 1.2.3.4:443',
      'timeout',
      'CERT_HAS_EXPIRED: certificate has expired',
    ]) {
      for (const lang of ['en', 'fr'] as const) {
        const sentence = describeAttempt(lang, URL_, failed(raw));
        expect(sentence).not.toContain(raw);
        expect(sentence).not.toMatch(/network_error|getaddrinfo|ENOTFOUND|ECONNREFUSED|CERT_/);
      }
    }
  });
});

describe('subscriptionHealth: a failing subscription is not Active', () => {
  const attempt = (http_status: number | null, error: string | null) => ({
    attempted_at: '2026-01-01T00:00:00.000Z',
    http_status,
    duration_ms: 5,
    error,
    response_body: null,
  });
  const delivery = (status: 'pending' | 'succeeded' | 'failed', attempts: ReturnType<typeof attempt>[]) =>
    ({ status, attempts }) as unknown as NonNullable<ConsoleWebhook['last_delivery']>;
  const base = { active: true, disabled_reason: null, failing_since: null, last_delivery: null };

  it('reads active, failing, paused and deactivated', () => {
    expect(subscriptionHealth(base)).toBe('active');
    expect(subscriptionHealth({ ...base, last_delivery: delivery('succeeded', [attempt(200, null)]) })).toBe('active');
    // A test delivery that failed (failing_since is not set by tests).
    expect(
      subscriptionHealth({
        ...base,
        last_delivery: delivery('failed', [attempt(null, 'network_error: getaddrinfo ENOTFOUND example.invalid')]),
      }),
    ).toBe('failing');
    // A delivery still retrying after a 500.
    expect(subscriptionHealth({ ...base, last_delivery: delivery('pending', [attempt(500, null)]) })).toBe('failing');
    expect(subscriptionHealth({ ...base, failing_since: '2026-01-01T00:00:00.000Z' })).toBe('failing');
    // A new event not yet attempted: the previous state is what failing_since says.
    expect(subscriptionHealth({ ...base, last_delivery: delivery('pending', []) })).toBe('active');
    expect(subscriptionHealth({ ...base, active: false })).toBe('paused');
    expect(subscriptionHealth({ ...base, active: false, disabled_reason: 'Deactivated…', failing_since: '2026-01-01T00:00:00.000Z' })).toBe(
      'deactivated',
    );
  });
});
