import { useEffect, useState } from 'react';
import { getSession, getSetupState } from '../../shared/console-session.js';
import { CONSOLE_ACCOUNT_PAGE } from '../../shared/console-account.js';
import { CONSOLE_HOME } from '../../shared/console-pages.js';
import type { ConsoleSession } from '../../shared/oauth.js';
import { call, loginUrl } from './api.js';
import { STRINGS, chooseLang, rememberLang, type Lang } from './i18n.js';
import { Alert, Layout, Loading } from './Layout.js';
import { currentPath, go, useLinkInterception, useLocation } from './navigation.js';
import { ConsentPage } from './pages/ConsentPage.js';
import { HomePage } from './pages/HomePage.js';
import { LoginPage } from './pages/LoginPage.js';
import { Shell } from './Shell.js';
import { adminSlice } from './slices/admin.js';
import { officeSlice } from './slices/office.js';
import { automationSlice } from './slices/automation.js';
import { recordsSlice } from './slices/records.js';
import { searchSlice } from './slices/search.js';
import { syncSlice } from './slices/sync.js';
import type { ConsolePage, PublicPage } from './slices/types.js';
import { webhooksSlice } from './slices/webhooks.js';

// Daily work first (pricing, jobs), then administration.
const SLICES = [searchSlice, automationSlice, recordsSlice, adminSlice, webhooksSlice, syncSlice, officeSlice];
const PAGES: readonly ConsolePage[] = SLICES.flatMap((s) => s.pages);
const PUBLIC_PAGES: readonly PublicPage[] = SLICES.flatMap((s) => s.publicPages ?? []);
const OVERLAYS = SLICES.flatMap((s) => s.overlays ?? []);
const HEADER_ITEMS = SLICES.flatMap((s) => s.headerItems ?? []);
const ATTENTION = SLICES.flatMap((s) => (s.attention ? [s.attention] : []));
const SETUP_PATH = '/console/setup';

/** The path under /console/ without trailing slashes ("/console" for the home page). */
function normalisePath(pathname: string): string {
  return pathname.replace(/\/+$/, '') || '/';
}

/** The page for a path: its own, or the page a detail path belongs to (/console/jobs/<id> → Jobs). */
function pageFor(path: string): ConsolePage | undefined {
  return PAGES.find((p) => path === p.path) ?? PAGES.find((p) => path.startsWith(`${p.path}/`));
}

export function App() {
  const [lang, setLang] = useState<Lang>(chooseLang());
  const t = STRINGS[lang];
  const location = useLocation();
  useLinkInterception();
  const path = normalisePath(location.pathname);
  const query = new URLSearchParams(location.search);

  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);

  function changeLang(next: Lang) {
    rememberLang(next);
    setLang(next);
  }

  if (path === '/console/login')
    return (
      <Titled title={`${t.signIn} · ${t.appName}`}>
        <LoginPage t={t} returnTo={query.get('return_to')} />
      </Titled>
    );
  if (path === '/console/consent') {
    return (
      <Titled title={`${t.consentPageTitle} · ${t.appName}`}>
        <ConsentPage t={t} lang={lang} requestId={query.get('request_id')} />
      </Titled>
    );
  }
  const publicPage = PUBLIC_PAGES.find((p) => p.path === path);
  if (publicPage) {
    const Page = publicPage.component;
    return (
      <Titled title={`${publicPage.title[lang]} · ${t.appName}`}>
        <Layout t={t}>
          <Page lang={lang} t={t} />
        </Layout>
      </Titled>
    );
  }
  return <SignedIn lang={lang} path={path} search={location.search} onLangChange={changeLang} />;
}

function Titled({ title, children }: { title: string; children: React.ReactNode }) {
  useEffect(() => {
    document.title = title;
  }, [title]);
  return children;
}

/**
 * What waits for a person (MFA prompts): its count leads the tab's title and sits on its page's
 * link in the menu. Every slice's hook runs on every render, always in the same order.
 */
function useAttention(): { total: number; byPage: ReadonlyMap<string, number> } {
  const counts = ATTENTION.map((a) => [a.page, a.useCount()] as const);
  return { total: counts.reduce((sum, [, n]) => sum + n, 0), byPage: new Map(counts) };
}

type SessionState = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; session: ConsoleSession };

/** Every other page: needs a session; with none, the login page (or first-run setup on an empty install). */
function SignedIn({ lang, path, search, onLangChange }: { lang: Lang; path: string; search: string; onLangChange: (lang: Lang) => void }) {
  const t = STRINGS[lang];
  const [state, setState] = useState<SessionState>({ kind: 'loading' });

  useEffect(() => {
    let cancelled = false;
    void (async () => {
      const result = await call(getSession);
      if (cancelled) return;
      if (!result.ok) return setState({ kind: 'error', message: result.error.message });
      if (result.data.signed_in) {
        const { signed_in: _, ...session } = result.data;
        return setState({ kind: 'ready', session });
      }
      // Signed out: first-run setup on an empty install, else the login page.
      const setup = await call(getSetupState);
      if (cancelled) return;
      if (setup.ok && setup.data.needed) return go(SETUP_PATH);
      const here = currentPath();
      go(here === CONSOLE_HOME ? loginUrl() : loginUrl(here));
    })();
    return () => {
      cancelled = true;
    };
  }, []);

  if (state.kind !== 'ready') {
    return (
      <Titled title={pageTitle(lang, path)}>
        <Layout t={t}>{state.kind === 'loading' ? <Loading t={t} /> : <Alert>{state.message}</Alert>}</Layout>
      </Titled>
    );
  }
  return <SessionPages lang={lang} path={path} search={search} onLangChange={onLangChange} session={state.session} />;
}

/** The tab's title of a page, before what waits for a person is counted in it. */
function pageTitle(lang: Lang, path: string): string {
  const t = STRINGS[lang];
  const page = pageFor(path);
  if (path === '/console') return t.homeTitle;
  return page ? `${page.label[lang]} · ${t.appName}` : t.appName;
}

/**
 * The pages of a signed-in user. Only here do the slices' live feeds open (through useAttention):
 * opened signed out, they would be refused on every visit to the login page.
 */
type SessionPagesProps = { lang: Lang; path: string; search: string; onLangChange: (lang: Lang) => void; session: ConsoleSession };

function SessionPages(props: SessionPagesProps) {
  // Until a reset password is changed, the service refuses every other console route: only My
  // account shows, and no page, feed or header item asks for what would be refused.
  return props.session.user.must_change_password ? <PasswordChangeOnly {...props} /> : <AllPages {...props} />;
}

const ACCOUNT_PAGE = PAGES.find((p) => p.path === CONSOLE_ACCOUNT_PAGE);

function PasswordChangeOnly({ lang, path, onLangChange, session }: SessionPagesProps) {
  const t = STRINGS[lang];
  const props = { lang, t, session };
  const Account = ACCOUNT_PAGE?.component;
  useEffect(() => {
    if (path !== CONSOLE_ACCOUNT_PAGE) go(CONSOLE_ACCOUNT_PAGE, { replace: true });
  }, [path]);
  return (
    <Titled title={pageTitle(lang, CONSOLE_ACCOUNT_PAGE)}>
      <Shell
        lang={lang}
        t={t}
        session={session}
        pages={ACCOUNT_PAGE ? [ACCOUNT_PAGE] : []}
        headerItems={[]}
        currentPage={CONSOLE_ACCOUNT_PAGE}
        attention={new Map()}
        onLangChange={onLangChange}
        overlays={null}
      >
        {Account ? <Account {...props} /> : null}
      </Shell>
    </Titled>
  );
}

function AllPages({ lang, path, search, onLangChange, session }: SessionPagesProps) {
  const t = STRINGS[lang];
  const attention = useAttention();
  const page = pageFor(path);
  const isHome = path === '/console';
  const baseTitle = pageTitle(lang, path);
  const title = attention.total > 0 ? `(${attention.total}) ${baseTitle}` : baseTitle;
  const props = { lang, t, session };
  const Page = page?.component;
  return (
    <Titled title={title}>
      <Shell
        lang={lang}
        t={t}
        session={session}
        pages={PAGES}
        headerItems={HEADER_ITEMS}
        currentPage={isHome ? '/console' : page?.path}
        attention={attention.byPage}
        onLangChange={onLangChange}
        overlays={OVERLAYS.map((Overlay, i) => (
          <Overlay key={i} {...props} />
        ))}
      >
        {/* Keyed by the location: a page opened again starts afresh, as after a load. */}
        {isHome ? (
          <HomePage key={path + search} {...props} />
        ) : Page ? (
          <Page key={path + search} {...props} />
        ) : (
          <Alert>{t.notFound}</Alert>
        )}
      </Shell>
    </Titled>
  );
}
