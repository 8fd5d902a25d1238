import { useEffect } from 'react';
import { STRINGS, detectLang } from './i18n.js';
import { ConsentPage } from './pages/ConsentPage.js';
import { HomePage } from './pages/HomePage.js';
import { LoginPage } from './pages/LoginPage.js';

/** The page for a path under /console/ (trailing slashes ignored); anything unknown is home. */
export type PageName = 'login' | 'consent' | 'home';

export function pageFor(pathname: string): PageName {
  const path = pathname.replace(/\/+$/, '');
  if (path === '/console/login') return 'login';
  if (path === '/console/consent') return 'consent';
  return 'home';
}

export function App() {
  const lang = detectLang();
  const t = STRINGS[lang];
  const page = pageFor(window.location.pathname);
  const query = new URLSearchParams(window.location.search);

  useEffect(() => {
    document.documentElement.lang = lang;
    document.title = page === 'login' ? `${t.signIn} · ${t.appName}` : page === 'consent' ? `${t.consentPageTitle} · ${t.appName}` : t.homeTitle;
  }, [lang, page, t]);

  switch (page) {
    case 'login':
      return <LoginPage t={t} returnTo={query.get('return_to')} />;
    case 'consent':
      return <ConsentPage t={t} lang={lang} requestId={query.get('request_id')} />;
    case 'home':
      return <HomePage t={t} />;
  }
}
