import { describe, expect, it } from 'vitest';
import { afterSignIn, consentFormAction } from '../../renderer/src/destinations.js';
import { detectLang } from '../../renderer/src/i18n.js';

/** The console's pure rules (renderer/src, no DOM): its language, and where it lets itself be sent. */

describe('detectLang: the preferred language chooses, French otherwise', () => {
  it('takes the first preference that is English or French', () => {
    expect(detectLang(['en-US'])).toBe('en');
    expect(detectLang(['en'])).toBe('en');
    expect(detectLang(['fr-FR'])).toBe('fr');
    expect(detectLang(['FR-ca'])).toBe('fr');
    expect(detectLang(['de-DE', 'en-GB', 'fr'])).toBe('en');
    expect(detectLang(['it', 'fr-BE', 'en'])).toBe('fr');
  });

  it('gives French when no preference is English or French', () => {
    expect(detectLang(['de-DE'])).toBe('fr');
    expect(detectLang(['es', 'pt-BR'])).toBe('fr');
    expect(detectLang(['enm'])).toBe('fr');
    expect(detectLang([])).toBe('fr');
  });
});

describe('afterSignIn: only a path on this origin is followed', () => {
  it('follows a path', () => {
    expect(afterSignIn('/console/consent?request_id=abc')).toBe('/console/consent?request_id=abc');
    expect(afterSignIn('/console/')).toBe('/console/');
  });

  it('goes home instead of anywhere else', () => {
    for (const unsafe of [
      '//evil.example/',
      '/\\evil.example',
      '/\t/evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      'console/',
      '',
    ]) {
      expect(afterSignIn(unsafe), unsafe).toBe('/console/');
    }
  });
});

describe('consentFormAction: the form posts to an OAuth path of this origin, or nowhere', () => {
  it('accepts the decision path the server sends', () => {
    expect(consentFormAction('/api/v1/mcp/oauth/consent')).toBe('/api/v1/mcp/oauth/consent');
  });

  it('refuses anything else', () => {
    for (const bad of [
      'http://127.0.0.1:3000/api/v1/mcp/oauth/consent',
      '//evil.example/api/v1/mcp/oauth/consent',
      '/api/v1/console/session',
      '/api/v1/mcp/oauth',
      '/api/v1/mcp/oauthx/consent',
      '/api/v1/mcp/oauth/../../console/session',
      '/api/v1/mcp/oauth/%2e%2e/%2E%2E/console/session',
      '/api/v1/mcp/oauth/\\evil',
      '',
    ]) {
      expect(consentFormAction(bad), bad).toBeNull();
    }
  });
});
