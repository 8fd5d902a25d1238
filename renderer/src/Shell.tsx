import { useEffect, useId, useRef, useState, type ComponentType, type ReactNode } from 'react';
import { signOut } from '../../shared/console-session.js';
import { CONSOLE_HOME } from '../../shared/console-pages.js';
import type { ConsoleSession } from '../../shared/oauth.js';
import { call, loginUrl } from './api.js';
import type { Lang, Strings } from './i18n.js';
import { DesktopWarnings } from './DesktopWarnings.js';
import { Alert } from './Layout.js';
import { go } from './navigation.js';
import { useServiceReachable } from './reachability.js';
import type { ConsolePage, PageProps } from './slices/types.js';

interface ShellProps {
  lang: Lang;
  t: Strings;
  session: ConsoleSession;
  pages: readonly ConsolePage[];
  /** The slices' words in the header (the sync status), shown to every user. */
  headerItems: readonly ComponentType<PageProps>[];
  /** The menu entry of the page shown ("/console" for home), if it has one. */
  currentPage: string | undefined;
  /** Counts of what waits for a person, by the page that handles it. */
  attention: ReadonlyMap<string, number>;
  onLangChange: (lang: Lang) => void;
  /** Shown above the page, in the flow (MFA prompts): they push the page down rather than cover it. */
  overlays: ReactNode;
  children: ReactNode;
}

const MAIN_ID = 'main';

/**
 * The signed-in console: a skip link; a header with the brand, the slices' header items, the
 * language switch, the user and sign-out; a side menu with a broker's daily pages first, then the
 * cabinet's other pages. On a phone the menu and the header's items fold behind one Menu button. The page's main column says so in place when the service
 * cannot be reached, and the page is loaded again once it answers.
 */
export function Shell({ lang, t, session, pages, headerItems, currentPage, attention, onLangChange, overlays, children }: ShellProps) {
  const [error, setError] = useState<string | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const { reachable, recoveries } = useServiceReachable();
  const visible = pages.filter((p) => p.inMenu !== false && (!p.adminOnly || session.user.role === 'admin'));
  const daily = visible.filter((p) => p.daily === true);
  const cabinet = visible.filter((p) => p.daily !== true);
  const mainRef = useRef<HTMLElement | null>(null);
  const firstPage = useRef(true);
  const menuId = useId();

  // A new page: close the folded menu and take the focus to the content, as a page load would.
  useEffect(() => {
    setMenuOpen(false);
    if (firstPage.current) {
      firstPage.current = false;
      return;
    }
    mainRef.current?.focus({ preventScroll: true });
  }, [currentPage]);

  async function leave() {
    const result = await call(signOut);
    if (result.ok || result.status === 401) go(loginUrl());
    else setError(result.error.message);
  }

  const waitingTotal = [...attention.values()].reduce((a, b) => a + b, 0);
  const link = (page: { path: string; label: string }) => {
    const count = attention.get(page.path) ?? 0;
    return (
      <li key={page.path}>
        <a href={page.path} aria-current={currentPage === page.path ? 'page' : undefined}>
          {page.label}
          {count > 0 && (
            <span className="nav-count" aria-label={t.waitingCount(count)}>
              {count}
            </span>
          )}
        </a>
      </li>
    );
  };
  return (
    <div className={menuOpen ? 'shell shell-menu-open' : 'shell'}>
      <a className="skip-link" href={`#${MAIN_ID}`} onClick={(e) => (e.preventDefault(), mainRef.current?.focus())}>
        {t.skipToContent}
      </a>
      <header className="topbar">
        <a className="brand" href={CONSOLE_HOME}>
          {t.appName}
        </a>
        <button
          type="button"
          className="button menu-toggle"
          aria-expanded={menuOpen}
          aria-controls={menuId}
          onClick={() => setMenuOpen(!menuOpen)}
        >
          {t.menu}
          {waitingTotal > 0 && <span className="nav-count">{waitingTotal}</span>}
        </button>
        <div className="topbar-end">
          {headerItems.map((Item, i) => (
            <Item key={i} lang={lang} t={t} session={session} />
          ))}
          <label className="lang-switch">
            <span className="visually-hidden">{t.language}</span>
            <select value={lang} onChange={(e) => onLangChange(e.target.value === 'en' ? 'en' : 'fr')} aria-label={t.language}>
              <option value="fr">Français</option>
              <option value="en">English</option>
            </select>
          </label>
          <a className="topbar-user" href="/console/account" title={t.myAccount}>
            {session.user.email}
          </a>
          <button type="button" className="button" onClick={() => void leave()}>
            {t.signOut}
          </button>
        </div>
      </header>
      <div className="shell-body">
        <nav id={menuId} className="sidebar" aria-label={t.navigation}>
          <ul className="nav">
            {link({ path: '/console', label: t.home })}
            {daily.map((p) => link({ path: p.path, label: p.label[lang] }))}
          </ul>
          {cabinet.length > 0 && (
            <>
              <p className="nav-heading">{t.cabinetMenu}</p>
              <ul className="nav">{cabinet.map((p) => link({ path: p.path, label: p.label[lang] }))}</ul>
            </>
          )}
        </nav>
        <main id={MAIN_ID} className="content content-wide" ref={mainRef} tabIndex={-1}>
          {!reachable && (
            <p className="alert unreachable" role="alert">
              {t.serviceUnreachable}
            </p>
          )}
          <DesktopWarnings />
          {error && <Alert>{error}</Alert>}
          {overlays}
          {/* Keyed by recoveries: once the service answers again, the page loads its data afresh. */}
          <div key={recoveries} className="page">
            {children}
          </div>
        </main>
      </div>
    </div>
  );
}
