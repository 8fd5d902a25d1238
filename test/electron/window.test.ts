import { describe, expect, it } from 'vitest';
import {
  decideNavigation,
  decidePermission,
  decideWindowOpen,
  DESKTOP_CSP,
  isShowingJob,
  jobPath,
  mainWindowOptions,
  withCsp,
} from '../../electron/window.js';
import { isExternalLinkAllowed } from '../../electron/bridge.js';

const ORIGIN = 'http://127.0.0.1:41234';

describe('the console window', () => {
  it('is isolated, sandboxed, without Node, with the preload only', () => {
    const options = mainWindowOptions('/app/dist/electron/preload.cjs', { show: false });
    expect(options.show).toBe(false);
    expect(options.webPreferences).toMatchObject({
      preload: '/app/dist/electron/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  it('adds the desktop CSP to the console origin’s responses that carry none, and keeps the server’s', () => {
    expect(withCsp(`${ORIGIN}/console/`, ORIGIN, { 'content-type': ['text/html'] })).toEqual({
      'content-type': ['text/html'],
      'Content-Security-Policy': [DESKTOP_CSP],
    });
    const own = { 'content-security-policy': ["default-src 'self'"] };
    expect(withCsp(`${ORIGIN}/console/`, ORIGIN, own)).toBe(own);
    const other = { 'content-type': ['text/html'] };
    expect(withCsp('https://example.com/', ORIGIN, other)).toBe(other);
    expect(withCsp(`${ORIGIN}/`, null, other)).toBe(other);
    expect(DESKTOP_CSP).toContain("script-src 'self'");
    expect(DESKTOP_CSP).toContain("object-src 'none'");
    expect(DESKTOP_CSP).not.toContain('unsafe');
  });

  describe('navigation guard', () => {
    it.each([
      [`${ORIGIN}/console/jobs?job=1`, 'allow'],
      [`${ORIGIN}/console/desktop-login?token=x`, 'allow'],
      ['http://127.0.0.1:9999/console/', 'open-external'],
      ['http://localhost:41234/console/', 'open-external'],
      ['https://www.assureur.fr/espace-courtier', 'open-external'],
      ['mailto:support@courtier.example', 'open-external'],
      ['https://user:pass@evil.example/', 'deny'],
      ['file:///etc/passwd', 'deny'],
      ['javascript:alert(1)', 'deny'],
      ['data:text/html,<script>1</script>', 'deny'],
      ['courtier://open', 'deny'],
      ['ms-msdt:/id PCWDiagnostic', 'deny'],
      ['not a url', 'deny'],
    ])('%s → %s', (url, decision) => {
      expect(decideNavigation(url, ORIGIN)).toBe(decision);
    });

    it('before the server listens, nothing is the console', () => {
      expect(decideNavigation(`${ORIGIN}/console/`, null)).toBe('open-external');
    });

    it('new windows are never opened: console pages load here, web links go to the system browser', () => {
      expect(decideWindowOpen(`${ORIGIN}/console/jobs`, ORIGIN)).toBe('navigate-here');
      expect(decideWindowOpen('https://docs.example/', ORIGIN)).toBe('open-external');
      expect(decideWindowOpen('file:///C:/Windows/', ORIGIN)).toBe('deny');
    });
  });

  it('denies every permission request', () => {
    for (const p of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal', 'fullscreen', 'unknown'])
      expect(decidePermission(p)).toBe(false);
  });

  it('the preload’s external links: http(s) and mailto only', () => {
    expect(isExternalLinkAllowed('https://example.com/a')).toBe(true);
    expect(isExternalLinkAllowed('mailto:a@b.fr')).toBe(true);
    expect(isExternalLinkAllowed('file:///etc/passwd')).toBe(false);
    expect(isExternalLinkAllowed('smb://server/share')).toBe(false);
    expect(isExternalLinkAllowed(42)).toBe(false);
    expect(isExternalLinkAllowed(`https://e.com/${'a'.repeat(3000)}`)).toBe(false);
  });

  it('the job page contract: /console/jobs?job=<id>', () => {
    expect(jobPath('8b1c-…')).toBe('/console/jobs?job=8b1c-%E2%80%A6');
    expect(isShowingJob(`${ORIGIN}/console/jobs?job=abc`, 'abc')).toBe(true);
    expect(isShowingJob(`${ORIGIN}/console/jobs/?job=abc&tab=mfa`, 'abc')).toBe(true);
    expect(isShowingJob(`${ORIGIN}/console/jobs?job=abd`, 'abc')).toBe(false);
    expect(isShowingJob(`${ORIGIN}/console/`, 'abc')).toBe(false);
    expect(isShowingJob(null, 'abc')).toBe(false);
  });
});
