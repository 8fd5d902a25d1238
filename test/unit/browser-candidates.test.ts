import { describe, expect, it } from 'vitest';
import { browserCandidates } from '../../server/robots/browser.js';

const DEBIAN = new Set(['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium-headless-shell', '/usr/bin/chromium']);
const exists = (files: Set<string>) => (path: string) => files.has(path);

describe('which browser the robots start', () => {
  it("takes Debian's headless shell first for headless robots, then the full Chromium", () => {
    expect(browserCandidates({ platform: 'linux', headed: false, exists: exists(DEBIAN) })).toEqual([
      { executablePath: '/usr/lib/chromium/chromium-headless-shell' },
      { executablePath: '/usr/bin/chromium' },
    ]);
  });

  it('never takes the headless shell for robots shown on screen', () => {
    expect(browserCandidates({ platform: 'linux', headed: true, exists: exists(DEBIAN) })).toEqual([
      { executablePath: '/usr/bin/chromium' },
    ]);
  });

  it('takes the full Chromium alone when the headless shell is not installed', () => {
    expect(browserCandidates({ platform: 'linux', headed: false, exists: exists(new Set(['/usr/bin/chromium'])) })).toEqual([
      { executablePath: '/usr/bin/chromium' },
    ]);
  });

  it('puts COURTIER_BROWSER_PATH first, then Chrome and Edge on Windows and macOS', () => {
    expect(browserCandidates({ configuredPath: 'C:\\Chrome\\chrome.exe', platform: 'win32', headed: false, exists: () => false })).toEqual([
      { executablePath: 'C:\\Chrome\\chrome.exe' },
      { channel: 'chrome' },
      { channel: 'msedge' },
    ]);
    expect(browserCandidates({ configuredPath: '/opt/chrome', platform: 'linux', headed: false, exists: exists(DEBIAN) })[0]).toEqual({
      executablePath: '/opt/chrome',
    });
  });

  it('has no candidate on a Linux machine without any browser', () => {
    expect(browserCandidates({ platform: 'linux', headed: false, exists: () => false })).toEqual([]);
  });
});
