import { useState, type ComponentType, type ReactNode } from 'react';
import { signOut } from '../../shared/console-session.js';
import { CONSOLE_HOME } from '../../shared/console-pages.js';
import type { ConsoleSession } from '../../shared/oauth.js';
import { call, loginUrl } from './api.js';
import type { Lang, Strings } from './i18n.js';
import { DesktopWarnings } from './DesktopWarnings.js';
import { Alert } from './Layout.js';
import { go } from './navigation.js';
import type { ConsolePage, PageProps } from './slices/types.js';

interface ShellProps {
  lang: Lang;
  t: Strings;
  session: ConsoleSession;
  pages: readonly ConsolePage[];
  /** The slices' words in the header (the sync status), shown to every user. */
  headerItems: readonly ComponentType<PageProps>[];
  currentPath: string;
  onLangChange: (lang: Lang) => void;
  children: ReactNode;
}

/** The signed-in console: brand, the sections this user may open, the slices' header items, the language switch, sign-out. */
export function Shell({ lang, t, session, pages, headerItems, currentPath, onLangChange, children }: ShellProps) {
  const [error, setError] = useState<string | null>(null);
  const visible = pages.filter((p) => !p.adminOnly || session.user.role === 'admin');

  async function leave() {
    const result = await call(signOut);
    if (result.ok || result.status === 401) go(loginUrl());
    else setError(result.error.message);
  }

  return (
    <div className="shell">
      <header className="topbar">
        <a className="brand" href={CONSOLE_HOME}>
          {t.appName}
        </a>
        <nav aria-label={t.navigation}>
          <ul className="nav">
            {visible.map((page) => (
              <li key={page.path}>
                <a href={page.path} aria-current={currentPath === page.path ? 'page' : undefined}>
                  {page.label[lang]}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-end">
          {headerItems.map((Item, i) => (
            <Item key={i} lang={lang} t={t} session={session} />
          ))}
          <label className="lang-switch">
            <span>{t.language}</span>
            <select value={lang} onChange={(e) => onLangChange(e.target.value === 'en' ? 'en' : 'fr')}>
              <option value="fr">Français</option>
              <option value="en">English</option>
            </select>
          </label>
          <a className="muted small" href="/console/account">{session.user.email}</a>
          <button type="button" className="button" onClick={() => void leave()}>
            {t.signOut}
          </button>
        </div>
      </header>
      <main className="content content-wide">
        <DesktopWarnings />
        {error && <Alert>{error}</Alert>}
        {children}
      </main>
    </div>
  );
}
