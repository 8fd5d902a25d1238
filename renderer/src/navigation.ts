import { useEffect, useState } from 'react';

/**
 * Navigation inside the console without reloading it: a console path is pushed onto the history and
 * the app renders the page for it; anything else (OAuth, the API, a file) is a full load.
 */

const NAVIGATED = 'courtier:navigated';
const CONSOLE_PREFIX = '/console/';
/** Paths under /console/ that are files, not pages. */
const NOT_PAGES = /^\/console\/assets\//;

/** Whether a same-origin URL is a page of the console (rendered in place). */
function isConsolePage(url: URL, origin: string): boolean {
  return url.origin === origin && (url.pathname === '/console' || url.pathname.startsWith(CONSOLE_PREFIX)) && !NOT_PAGES.test(url.pathname);
}

export function go(url: string, { replace = false }: { replace?: boolean } = {}): void {
  const target = new URL(url, window.location.href);
  if (!isConsolePage(target, window.location.origin)) return window.location.assign(target.href);
  if (replace) window.history.replaceState(null, '', target.href);
  else window.history.pushState(null, '', target.href);
  window.dispatchEvent(new Event(NAVIGATED));
  window.scrollTo(0, 0);
}

/** The current path and query, as a return_to for the login page. */
export function currentPath(): string {
  return window.location.pathname + window.location.search;
}

/** The location the app renders, updated on go() and on the browser's back and forward. */
export function useLocation(): { pathname: string; search: string } {
  const [location, setLocation] = useState(() => ({ pathname: window.location.pathname, search: window.location.search }));
  useEffect(() => {
    const update = () => setLocation({ pathname: window.location.pathname, search: window.location.search });
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return location;
}

/**
 * Follows clicks on links to console pages in place. A click with a modifier key, on a link that
 * downloads or opens elsewhere, or to another origin, is left to the browser.
 */
export function useLinkInterception(): void {
  useEffect(() => {
    function onClick(event: MouseEvent) {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const anchor = event.target instanceof Element ? event.target.closest('a') : null;
      if (!anchor || anchor.hasAttribute('download') || (anchor.target !== '' && anchor.target !== '_self')) return;
      const target = new URL(anchor.href, window.location.href);
      if (!isConsolePage(target, window.location.origin)) return;
      event.preventDefault();
      go(target.href);
    }
    document.addEventListener('click', onClick);
    return () => document.removeEventListener('click', onClick);
  }, []);
}
