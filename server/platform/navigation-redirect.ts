import type { Route } from 'playwright-core';

/** The member Playwright's own HAR replay redirects a navigation with; not in its public types. */
interface RedirectingRoute {
  _redirectNavigationRequest(url: string): Promise<void>;
}

/**
 * Answers a navigation with a redirect to `url` whose next request goes through the routes again.
 * A 3xx given to route.fulfill is followed by the browser outside the routes (to the network): a
 * cassette replayed offline would leak. Playwright's HAR replay uses this internal member for that
 * reason; it is checked at run time so that an upgrade that drops it fails loudly.
 */
export async function redirectNavigation(route: Route, url: string): Promise<void> {
  const redirecting = route as unknown as Partial<RedirectingRoute>;
  if (typeof redirecting._redirectNavigationRequest !== 'function') {
    throw new Error('This Playwright cannot redirect a routed navigation (Route._redirectNavigationRequest is gone).');
  }
  await redirecting._redirectNavigationRequest(url);
}
