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
 * The signed-in console: a skip link, the brand, a broker's daily pages, the cabinet's other pages
 * under one menu, the slices' header items, the language switch and the user's menu; on a phone
 * all of it folds behind one Menu button. The page's main column says so in place when the service
 * cannot be reached, and the page is loaded again once it answers.
 */
export function Shell({ lang, t, session, pages, headerItems, currentPage, attention, onLangChange, overlays, children }: ShellProps) {
  const [error, setError] = useState<string | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const { reachable, recoveries } = useServiceReachable();
  const visible = pages.filter((p) => !p.adminOnly || session.user.role === 'admin');
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
  const cabinetOpen = cabinet.some((p) => p.path === currentPage);

  return (
    <div className="shell">
      <a className="skip-link" href={`#${MAIN_ID}`} onClick={(e) => (e.preventDefault(), mainRef.current?.focus())}>
        {t.skipToContent}
      </a>
      <header className="topbar">
        <a className="brand" href={CONSOLE_HOME}>
          {t.appName}
        </a>
        <button type="button" className="button menu-toggle" aria-expanded={menuOpen} aria-controls={menuId} onClick={() => setMenuOpen(!menuOpen)}>
          {t.menu}
          {[...attention.values()].some((n) => n > 0) && <span className="nav-count">{[...attention.values()].reduce((a, b) => a + b, 0)}</span>}
        </button>
        <div id={menuId} className={menuOpen ? 'topbar-menu topbar-menu-open' : 'topbar-menu'}>
          <nav aria-label={t.navigation}>
            <ul className="nav">
              {link({ path: '/console', label: t.home })}
              {daily.map((p) => link({ path: p.path, label: p.label[lang] }))}
              {cabinet.length > 0 && (
                <li>
                  <details className="nav-group" open={menuOpen || undefined} key={`${menuOpen}-${currentPage}`}>
                    <summary className={cabinetOpen ? 'nav-group-current' : undefined}>{t.cabinetMenu}</summary>
                    <ul className="nav-group-items">{cabinet.map((p) => link({ path: p.path, label: p.label[lang] }))}</ul>
                  </details>
                </li>
              )}
            </ul>
          </nav>
          <div className="topbar-end">
            {headerItems.map((Item, i) => (
              <Item key={i} lang={lang} t={t} session={session} />
            ))}
            <label className="lang-switch">
              <span className="visually-hidden">{t.language}</span>
              <select value={lang} onChange={(e) => onLangChange(e.target.value === 'en' ? 'en' : 'fr')} aria-label={t.language}>
                <option value="fr">FR</option>
                <option value="en">EN</option>
              </select>
            </label>
            <details className="user-menu" key={currentPage}>
              <summary title={session.user.email}>{session.user.email}</summary>
              <div className="user-menu-items">
                <p className="muted small">{session.cabinet.name}</p>
                <a href="/console/account">{t.myAccount}</a>
                <button type="button" className="button" onClick={() => void leave()}>
                  {t.signOut}
                </button>
              </div>
            </details>
          </div>
        </div>
      </header>
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
  );
}
