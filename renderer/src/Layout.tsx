import type { ReactNode } from 'react';
import type { Strings } from './i18n.js';

/** The frame of every console page: the brand, then one main column. */
export function Layout({ t, children, wide = false }: { t: Strings; children: ReactNode; wide?: boolean }) {
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">{t.appName}</span>
      </header>
      <main className={wide ? 'content content-wide' : 'content'}>{children}</main>
    </div>
  );
}

export function Loading({ t }: { t: Strings }) {
  return (
    <p className="muted" role="status">
      {t.loading}
    </p>
  );
}

export function Alert({ children }: { children: ReactNode }) {
  return (
    <p className="alert" role="alert">
      {children}
    </p>
  );
}
