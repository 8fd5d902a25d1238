import { describe, expect, it } from 'vitest';
import { allowListOf, blockedOriginOf, isAllowed, outsideReachNote } from '../../server/robots/reach.js';

const extranet = allowListOf({ origins: ['https://extranet.example.fr', 'https://cdn.example.fr:8443'], prefixes: () => [] });
const sandbox = allowListOf({ origins: [], prefixes: () => ['http://127.0.0.1:8787/sandbox/insurer/'] });

describe('what a robot’s browser may load', () => {
  it('lets through the declared origins, whatever the path and query', () => {
    for (const url of [
      'https://extranet.example.fr/',
      'https://extranet.example.fr',
      'https://extranet.example.fr/devis/auto?nom=Dupont#haut',
      'https://EXTRANET.example.fr/login',
      'https://extranet.example.fr:443/login',
      'https://cdn.example.fr:8443/app.js',
    ]) {
      expect(isAllowed(url, extranet), url).toBe(true);
    }
  });

  it('refuses look-alike hosts, userinfo, other ports and other schemes', () => {
    for (const url of [
      'https://extranet.example.fr.evil.test/',
      'https://evil.test/extranet.example.fr',
      'https://extranet.example.fr@evil.test/',
      'https://extranet.example.fr:443@evil.test/',
      'https://extranet.example.fr:8443/',
      'https://cdn.example.fr/app.js',
      'http://extranet.example.fr/',
      'ftp://extranet.example.fr/',
      'file:///etc/passwd',
      'https://sub.extranet.example.fr/',
      'https://example.fr/',
      'https://extranet.example.fr./',
      'not a url',
      '',
    ]) {
      expect(isAllowed(url, extranet), url).toBe(false);
    }
  });

  it('keeps a prefix to its path on the service, never the service’s API', () => {
    for (const url of [
      'http://127.0.0.1:8787/sandbox/insurer/',
      'http://127.0.0.1:8787/sandbox/insurer/login?raison=expiree',
      'http://127.0.0.1:8787/sandbox/insurer/devis/auto/../formule',
    ]) {
      expect(isAllowed(url, sandbox), url).toBe(true);
    }
    for (const url of [
      'http://127.0.0.1:8787/sandbox/insurer-evil/',
      'http://127.0.0.1:8787/sandbox/insurer',
      'http://127.0.0.1:8787/sandbox/insurer/../../api/v1/public/clients',
      'http://127.0.0.1:8787/sandbox/insurer/%2e%2e/%2E%2E/api/v1/public/clients',
      'http://127.0.0.1:8787/sandbox/insurer/..\\..\\api/v1/public/clients',
      'http://127.0.0.1:8787/sandbox/insurer%2F..%2F..%2Fapi',
      'http://127.0.0.1:8787/api/v1/public/clients?x=/sandbox/insurer/',
      'http://127.0.0.1:8787/',
      'http://127.0.0.1:8788/sandbox/insurer/',
      'https://127.0.0.1:8787/sandbox/insurer/',
      'http://localhost:8787/sandbox/insurer/',
      'http://127.0.0.1:8787@evil.test/sandbox/insurer/',
    ]) {
      expect(isAllowed(url, sandbox), url).toBe(false);
    }
  });

  it('lets through what never leaves the machine', () => {
    for (const url of ['data:image/png;base64,iVBORw0KGgo=', 'blob:https://evil.test/5f0c', 'about:blank', 'about:srcdoc']) {
      expect(isAllowed(url, extranet), url).toBe(true);
    }
  });

  it('checks a WebSocket against its page origin’s scheme', () => {
    expect(isAllowed('wss://extranet.example.fr/socket', extranet)).toBe(true);
    expect(isAllowed('ws://extranet.example.fr/socket', extranet)).toBe(false);
    expect(isAllowed('wss://evil.test/socket', extranet)).toBe(false);
    expect(isAllowed('ws://127.0.0.1:8787/sandbox/insurer/socket', sandbox)).toBe(true);
    expect(isAllowed('ws://127.0.0.1:8787/api/socket', sandbox)).toBe(false);
  });

  it('allows nothing for an empty reach or one that does not parse', () => {
    const none = allowListOf({ origins: ['not an origin'], prefixes: () => ['/sandbox/insurer/'] });
    expect(isAllowed('https://extranet.example.fr/', none)).toBe(false);
    expect(isAllowed('http://127.0.0.1:8787/sandbox/insurer/', none)).toBe(false);
    expect(isAllowed('about:blank', none)).toBe(true);
  });

  it('gives equal reaches the same key, and different ones different keys', () => {
    const again = allowListOf({ origins: ['https://cdn.example.fr:8443', 'https://extranet.example.fr'], prefixes: () => [] });
    expect(again.key).toBe(extranet.key);
    expect(sandbox.key).not.toBe(extranet.key);
    expect(allowListOf({ origins: [], prefixes: () => ['http://127.0.0.1:9999/sandbox/insurer/'] }).key).not.toBe(sandbox.key);
  });
});

describe('what is said of a blocked request', () => {
  it('names its origin only, never its path or query', () => {
    expect(blockedOriginOf('https://tracker.evil.test/p?email=jeanne.martin%40example.fr')).toBe('https://tracker.evil.test');
    expect(blockedOriginOf('wss://evil.test:9000/socket?client=42')).toBe('https://evil.test:9000');
    expect(blockedOriginOf('file:///home/jeanne/contrat.pdf')).toBe('file:');
    expect(blockedOriginOf('::')).toBe('an unreadable URL');
  });

  it('ends a failure message with the origins and how many requests', () => {
    expect(outsideReachNote(new Map([['https://cdn.evil.test', 1]]))).toBe(
      "The insurer's pages asked for https://cdn.evil.test, which its adapter does not declare (1 request).",
    );
    const many = new Map([
      ['https://a.test', 2],
      ['https://b.test', 1],
      ['https://c.test', 1],
      ['https://d.test', 3],
    ]);
    expect(outsideReachNote(many)).toBe(
      "The insurer's pages asked for https://a.test, https://b.test, https://c.test and 1 more, which its adapter does not declare (7 requests).",
    );
  });
});
