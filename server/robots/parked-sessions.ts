import type { BrowserContext, Page } from 'playwright-core';
import type { ContextGuard } from './reach.js';

/**
 * How long a successful job's browser context stays open, still logged in to the portal, for the
 * same login's next job: a broker pricing several quotes in a row logs in (and types an MFA code)
 * once, and each further job skips a new browser context and the login (a large share of its CPU).
 */
export const SESSION_IDLE_MS = 2 * 60_000;
/** Parked sessions at most (each keeps a renderer process and its memory): the oldest is closed first. */
const MAX_PARKED_SESSIONS = 4;

/** A successful job's context, kept logged in for its login's next job. */
interface ParkedSession {
  context: BrowserContext;
  page: Page;
  /** The filter installed on the context when it was made, which it keeps for the next job. */
  guard: ContextGuard | undefined;
  parkedAt: number;
}

/**
 * A full garbage collection in the page's renderer. Chromium leaves each page's garbage to grow
 * the renderer's heap: a context resumed job after job would otherwise hold far more than a fresh
 * one's memory after a few jobs. A failure only costs memory.
 */
async function collectGarbage(context: BrowserContext, page: Page): Promise<void> {
  try {
    const devtools = await context.newCDPSession(page);
    await devtools.send('HeapProfiler.collectGarbage');
    await devtools.detach();
  } catch {
    // The next park collects again.
  }
}

/**
 * Successful jobs' contexts, by login, in the order they were parked (oldest first). `close`
 * closes a context for good; `isOpen` says whether the runtime still owns it (not closed meanwhile).
 */
export function createParkedSessions(options: {
  now: () => number;
  close: (context: BrowserContext) => Promise<void>;
  isOpen: (context: BrowserContext) => boolean;
}) {
  const { now, close } = options;
  const parked = new Map<string, ParkedSession>();
  const expired = (session: ParkedSession) => now() - session.parkedAt >= SESSION_IDLE_MS;

  return {
    /** The login's parked session, taken out of the pool; undefined (and closed) if it expired or its browser is gone. */
    resume(login: string): ParkedSession | undefined {
      const found = parked.get(login);
      if (!found) return undefined;
      parked.delete(login);
      if (!expired(found) && !found.page.isClosed() && found.context.browser()?.isConnected()) return found;
      void close(found.context);
      return undefined;
    },

    /** Keeps a successful job's context for its login's next job: its one page, no trace running. */
    async park(login: string, context: BrowserContext, page: Page | undefined, guard: ContextGuard | undefined): Promise<void> {
      for (const other of context.pages()) if (other !== page) await other.close().catch(() => undefined);
      if (!page || page.isClosed()) return close(context);
      await collectGarbage(context, page);
      // The runtime was closed meanwhile (or the browser died): nothing to keep.
      if (page.isClosed() || !options.isOpen(context)) return close(context);
      const previous = parked.get(login);
      parked.delete(login);
      if (previous) void close(previous.context);
      parked.set(login, { context, page, guard, parkedAt: now() });
      for (const [key, oldest] of parked) {
        if (parked.size <= MAX_PARKED_SESSIONS) break;
        parked.delete(key);
        void close(oldest.context);
      }
    },

    /** Closes the sessions idle for SESSION_IDLE_MS or more; returns how many. */
    async closeIdle(): Promise<number> {
      const idle = [...parked].filter(([, session]) => expired(session));
      for (const [login, session] of idle) {
        parked.delete(login);
        await close(session.context);
      }
      return idle.length;
    },

    /** Forgets them all (the runtime closes every context itself). */
    clear: () => parked.clear(),
  };
}
