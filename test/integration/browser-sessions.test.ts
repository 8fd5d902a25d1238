// @module-tag browser
/**
 * The browser runtime keeps a successful job's context, logged in, for the same login's next job,
 * and for nobody else. Real Chromium; time is the injected clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserRuntime, type BrowserRuntime } from '../../server/robots/browser.js';
import { SESSION_IDLE_MS } from '../../server/robots/parked-sessions.js';
import type { Reach } from '../../server/robots/reach.js';
import { tempDir, testClock } from '../helpers/server.js';

const clock = testClock();
let runtime: BrowserRuntime;
let jobs = 0;

beforeAll(() => {
  runtime = createBrowserRuntime({ dataDir: tempDir(), headed: false, now: clock.now });
});
afterAll(async () => {
  await runtime?.close();
});

/** One job's run: opens its page, marks it (as a portal's cookie would), ends as told; returns the page it was given. */
async function job(login: string | undefined, end: 'succeeded' | 'failed' | 'abandoned', mark = `job ${++jobs}`, reach?: Reach) {
  const session = runtime.session(`job-${jobs}`, { secrets: [], ...(login === undefined ? {} : { login }), ...(reach ? { reach } : {}) });
  const page = await session.openPage();
  const before = await page.title();
  await page.setContent(`<title>${mark}</title><h1>${mark}</h1>`);
  await session.finish(end);
  return { page, before };
}

describe('browser sessions resumed by login', () => {
  it('a success parks the context: the same login resumes its page, another login gets a fresh one', async () => {
    const first = await job('login-a', 'succeeded', 'a logged in');
    const second = await job('login-a', 'succeeded');
    expect(second.page).toBe(first.page);
    expect(second.before).toBe('a logged in');
    const other = await job('login-b', 'succeeded');
    expect(other.page).not.toBe(first.page);
    expect(other.before).toBe('');
  });

  it('a failed, stopped or unnamed run is never resumed', async () => {
    await job('login-c', 'succeeded', 'c parked');
    const failed = await job('login-c', 'failed');
    expect(failed.before).toBe('c parked');
    expect(failed.page.isClosed()).toBe(true);
    expect((await job('login-c', 'abandoned')).before).toBe('');
    expect((await job('login-c', 'succeeded')).before).toBe('');
    const unnamed = await job(undefined, 'succeeded');
    expect(unnamed.page.isClosed()).toBe(true);
  });

  it('a parked session is closed once idle for SESSION_IDLE_MS, by the sweep or when it would be resumed', async () => {
    const parked = await job('login-d', 'succeeded', 'd parked');
    clock.advance(SESSION_IDLE_MS - 1);
    expect(await runtime.closeIdleSessions()).toBe(0);
    expect(parked.page.isClosed()).toBe(false);
    clock.advance(1);
    expect(await runtime.closeIdleSessions()).toBeGreaterThanOrEqual(1);
    expect(parked.page.isClosed()).toBe(true);
    expect((await job('login-d', 'succeeded', 'd again')).before).toBe('');

    clock.advance(SESSION_IDLE_MS);
    const fresh = await job('login-d', 'succeeded');
    expect(fresh.before).toBe('');
  });

  it('keeps at most 4 parked sessions, closing the oldest first', async () => {
    clock.advance(SESSION_IDLE_MS);
    await runtime.closeIdleSessions();
    const parked: Awaited<ReturnType<typeof job>>[] = [];
    for (const login of ['e1', 'e2', 'e3', 'e4', 'e5']) parked.push(await job(login, 'succeeded', `${login} parked`));
    await expect.poll(() => parked[0]?.page.isClosed()).toBe(true);
    expect(parked.slice(1).map((p) => p.page.isClosed())).toEqual([false, false, false, false]);
    expect((await job('e5', 'succeeded')).before).toBe('e5 parked');
  });

  it('a parked context is resumed only under the reach its filter was made with', async () => {
    const extranet = { origins: ['https://extranet.example.fr'], prefixes: () => [] };
    const moved = { origins: ['https://extranet.example.com'], prefixes: () => [] };
    const parked = await job('login-g', 'succeeded', 'g parked', extranet);
    const again = await job('login-g', 'succeeded', 'g again', { origins: ['https://extranet.example.fr/'], prefixes: () => [] });
    expect(again.page).toBe(parked.page);
    expect(again.before).toBe('g parked');
    expect((await job('login-g', 'succeeded', 'g moved', moved)).before).toBe('');
    expect((await job('login-g', 'succeeded')).before).toBe('');
  });

  it('closing the runtime closes the parked sessions', async () => {
    const parked = await job('login-f', 'succeeded');
    await runtime.close();
    expect(parked.page.isClosed()).toBe(true);
  });
});
