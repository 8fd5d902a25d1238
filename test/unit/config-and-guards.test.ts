/**
 * Small pure parts of the service, one describe each: its configuration (loadConfig, the default data
 * dir, serve's first-run hint) and the guards of the HTTP API (an API key's IP allowlist and random
 * material, the Host header's parsing, the rate limiter, the redaction of secrets in logged URLs).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileIpAllowlist } from '../../server/api-keys/ip-allowlist.js';
import { randomBase62 } from '../../server/api-keys/service.js';
import { firstRunHint } from '../../server/cli/serve.js';
import { ConfigError, loadConfig } from '../../server/config.js';
import { redactUrl } from '../../server/platform/logging.js';
import { defaultDataDir } from '../../server/paths.js';
import { parseHostHeader } from '../../server/plugins/local-guard.js';
import { createRateLimiter } from '../../server/plugins/rate-limit.js';
import { testClock } from '../helpers/server.js';

describe('IP allowlist', () => {
  it('matches IPv4 and IPv6 addresses and blocks, and IPv4-mapped IPv6 clients', () => {
    const allows = compileIpAllowlist(['192.168.1.0/24', '10.1.2.3', '2001:db8::/32', '::1']);
    expect(allows('192.168.1.77')).toBe(true);
    expect(allows('::ffff:192.168.1.77')).toBe(true);
    expect(allows('192.168.2.1')).toBe(false);
    expect(allows('10.1.2.3')).toBe(true);
    expect(allows('10.1.2.4')).toBe(false);
    expect(allows('2001:db8:1::5')).toBe(true);
    expect(allows('2001:db9::1')).toBe(false);
    expect(allows('::1')).toBe(true);
    expect(allows('not an ip')).toBe(false);
  });
});

describe('key material', () => {
  it('randomBase62 gives the requested length over the base62 alphabet, whatever the bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.integer({ min: 1, max: 64 }), (bytes, length) => {
        let offset = 0;
        // Cycles through the given bytes (plus a counter, so rejection sampling always progresses).
        const source = (n: number) => Buffer.from(Array.from({ length: n }, () => ((bytes[offset % bytes.length] ?? 0) + offset++) % 256));
        const out = randomBase62(length, source);
        expect(out).toHaveLength(length);
        expect(out).toMatch(/^[0-9A-Za-z]+$/);
      }),
    );
  });
});

describe('Host header parsing', () => {
  it('reads names, IPv6 literals and ports; refuses garbage', () => {
    expect(parseHostHeader('localhost:8787')).toEqual({ hostname: 'localhost', port: 8787 });
    expect(parseHostHeader('[::1]:80')).toEqual({ hostname: '[::1]', port: 80 });
    expect(parseHostHeader('127.0.0.1')).toEqual({ hostname: '127.0.0.1', port: null });
    expect(parseHostHeader('LOCALHOST')).toEqual({ hostname: 'localhost', port: null });
    expect(parseHostHeader('a:b:c')).toBeNull();
    expect(parseHostHeader('')).toBeNull();
  });
});

describe('log redaction', () => {
  it('censors secret-bearing query parameters and keeps the others', () => {
    expect(redactUrl('/x?limit=5&api_key=svc_prod_abc&code=123&state=s')).toBe('/x?limit=5&api_key=[redacted]&code=[redacted]&state=s');
    expect(redactUrl('/x')).toBe('/x');
  });
});

describe('rate limiter', () => {
  it('counts per id in aligned windows', () => {
    const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30));
    const limiter = createRateLimiter({ limit: 2, windowMs: 60_000, clock });
    expect(limiter.hit('a')).toMatchObject({ allowed: true, remaining: 1, resetInSeconds: 30 });
    expect(limiter.hit('a')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.hit('a')).toMatchObject({ allowed: false, remaining: 0 });
    expect(limiter.hit('b').allowed).toBe(true);
    clock.advance(30_000);
    expect(limiter.hit('a')).toMatchObject({ allowed: true, remaining: 1, resetInSeconds: 60 });
  });
});

describe('configuration', () => {
  it('reads COURTIER_* variables, lets flags win, and defaults to loopback', () => {
    const config = loadConfig(
      { port: '9000' },
      { COURTIER_PORT: '8000', COURTIER_DATA_DIR: '/tmp/x', COURTIER_CORS_ORIGINS: 'https://a.fr, https://b.fr' },
    );
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 9000,
      dataDir: '/tmp/x',
      corsOrigins: ['https://a.fr', 'https://b.fr'],
      rateLimitPerMinute: 600,
    });
  });

  it('names the variable of a bad setting', () => {
    expect(() => loadConfig({}, { COURTIER_PORT: '70000', COURTIER_DATA_DIR: '/tmp/x' })).toThrow(ConfigError);
    expect(() => loadConfig({}, { COURTIER_PORT: '70000', COURTIER_DATA_DIR: '/tmp/x' })).toThrow(/COURTIER_PORT/);
  });

  it('defaults the data dir to the per-user app-data folder of each OS', () => {
    expect(defaultDataDir({ HOME: '/home/b' }, 'linux')).toBe('/home/b/.local/share/courtier');
    expect(defaultDataDir({ HOME: '/Users/b' }, 'darwin')).toBe('/Users/b/Library/Application Support/Courtier');
    expect(defaultDataDir({ APPDATA: 'C:\\Users\\b\\AppData\\Roaming', HOME: 'C:\\Users\\b' }, 'win32')).toMatch(/Courtier$/);
  });
});

describe('first-run hint of serve', () => {
  it('points to the console over loopback when the service listens there, and always to courtier init', () => {
    const cases: [string, string | null][] = [
      ['127.0.0.1', 'http://127.0.0.1:8787/console/'],
      ['localhost', 'http://localhost:8787/console/'],
      ['::1', 'http://[::1]:8787/console/'],
      ['0.0.0.0', 'http://127.0.0.1:8787/console/'],
      ['::', 'http://127.0.0.1:8787/console/'],
      // On a LAN address alone, no loopback peer reaches it: the console's setup would be refused.
      ['192.168.1.10', null],
    ];
    for (const [host, setupUrl] of cases) {
      const hint = firstRunHint(host, 8787);
      expect(hint.setupUrl, host).toBe(setupUrl);
      if (setupUrl !== null) expect(hint.message, host).toContain(`open ${setupUrl} on this machine for the first-run setup`);
      expect(hint.message, host).toContain('`courtier init --cabinet NAME --email E --password-stdin`');
    }
  });
});
