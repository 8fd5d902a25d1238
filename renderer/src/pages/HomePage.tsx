import { useEffect, useState } from 'react';
import { getConsoleWallet, getSettings, listConnectedApps } from '../../../shared/console-admin.js';
import { listConsoleJobs } from '../../../shared/console-automation.js';
import { listInsurers } from '../../../shared/console-insurers.js';
import { listConsoleWebhooks } from '../../../shared/console-webhooks.js';
import { call } from '../api.js';
import { subscriptionHealth } from './webhooks/format.js';
import type { PageProps } from '../slices/types.js';
import { HOME_STRINGS, type HomeStrings } from './homeStrings.js';

/** One line of the checklist: done or not, what it means, and where to go (or what to do) next. */
interface Check {
  id: string;
  done: boolean;
  title: string;
  detail: string;
  link?: { href: string; label: string };
}

type Board = { kind: 'loading' } | { kind: 'ready'; checks: Check[]; mcpUrl: string | null };

/**
 * Reads what the checklist needs, each line from the contract's own routes; a line whose route this
 * user may not call (an admin's) is left out rather than shown as not done.
 */
async function readBoard(h: HomeStrings, isAdmin: boolean): Promise<Board> {
  const [insurers, wallet, priced, webhooks, apps, settings] = await Promise.all([
    call(listInsurers),
    call(getConsoleWallet),
    call(listConsoleJobs, { query: { status: 'completed', limit: 1 } }),
    isAdmin ? call(listConsoleWebhooks) : null,
    call(listConnectedApps),
    isAdmin ? call(getSettings) : null,
  ]);
  const checks: Check[] = [];
  if (insurers.ok) {
    const tested = insurers.data.data.some((i) => i.last_login_test?.ok === true);
    const configured = insurers.data.data.some((i) => i.credentials.configured);
    checks.push({
      id: 'insurer',
      done: tested,
      title: h.insurerTitle,
      detail: tested ? h.insurerDone : configured ? h.insurerUntested(isAdmin) : h.insurerMissing(isAdmin),
      link: { href: '/console/insurers', label: h.openInsurers },
    });
  }
  if (wallet.ok) {
    const balance = wallet.data.balance;
    checks.push({
      id: 'credits',
      done: balance > 0,
      title: h.creditsTitle,
      detail: balance > 0 ? h.creditsDone(balance) : h.creditsMissing(wallet.data.synced ? 'hub' : isAdmin ? 'admin' : 'broker'),
      link: { href: '/console/wallet', label: h.openWallet },
    });
  }
  if (priced.ok) {
    const first = priced.data.data[0];
    checks.push({
      id: 'quote',
      done: first !== undefined,
      title: h.quoteTitle,
      detail: first ? h.quoteDone(first.insured ?? h.someone, first.product_label) : h.quoteMissing,
      link: first ? { href: '/console/jobs', label: h.openJobs } : { href: '/console/pricing', label: h.openPricing },
    });
  }
  if (webhooks?.ok) {
    const list = webhooks.data.data;
    // The Webhooks page's own rule: a failing or deactivated endpoint is not healthy (a paused one is a person's choice).
    const bad = list.filter((webhook) => ['failing', 'deactivated'].includes(subscriptionHealth(webhook)));
    checks.push({
      id: 'webhooks',
      done: bad.length === 0,
      title: h.webhooksTitle,
      detail: list.length === 0 ? h.webhooksNone : bad.length === 0 ? h.webhooksDone(list.length) : h.webhooksFailing(bad.length),
      link: { href: '/console/webhooks', label: h.openWebhooks },
    });
  }
  if (apps.ok) {
    checks.push({
      id: 'assistant',
      done: apps.data.length > 0,
      title: h.assistantTitle,
      detail: apps.data.length > 0 ? h.assistantDone(apps.data.map((a) => a.client_name).join(', ')) : h.assistantMissing,
      link: { href: '/console/apps', label: h.openApps },
    });
  }
  const base = settings?.ok ? settings.data.public_base_url : window.location.origin;
  return { kind: 'ready', checks, mcpUrl: `${base.replace(/\/+$/, '')}/mcp` };
}

function CopyButton({ value, label, copied }: { value: string; label: string; copied: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="button"
      onClick={() =>
        void navigator.clipboard?.writeText(value).then(
          () => setDone(true),
          () => setDone(false),
        )
      }
    >
      {done ? copied : label}
    </button>
  );
}

/** /console/: the cabinet, then what to do next — a checklist read from the service — and the MCP URL to paste. */
export function HomePage({ lang, t, session }: PageProps) {
  const h = HOME_STRINGS[lang];
  const isAdmin = session.user.role === 'admin';
  const [board, setBoard] = useState<Board>({ kind: 'loading' });

  useEffect(() => {
    let cancelled = false;
    void readBoard(h, isAdmin).then((next) => {
      if (!cancelled) setBoard(next);
    });
    return () => {
      cancelled = true;
    };
  }, [h, isAdmin]);

  const checks = board.kind === 'ready' ? board.checks : [];
  const remaining = checks.filter((c) => !c.done).length;

  return (
    <div className="home">
      <section className="card" aria-labelledby="home-title">
        <h1 id="home-title">{t.homeTitle}</h1>
        <p>
          {t.signedInAsAt} <strong>{session.user.email}</strong> — {session.cabinet.name}
          <span className="muted">{` (${session.user.role === 'admin' ? h.roleAdmin : h.roleBroker})`}</span>
        </p>
        <dl className="home-facts">
          <dt>{h.cabinetId}</dt>
          <dd>
            <code id="cabinet-id">{session.cabinet.id}</code> <CopyButton value={session.cabinet.id} label={h.copy} copied={h.copied} />
            <span className="muted small home-hint">{h.cabinetIdHint}</span>
          </dd>
        </dl>
      </section>

      <section className="card" aria-labelledby="checklist-title" aria-busy={board.kind === 'loading'}>
        <h2 id="checklist-title">{h.checklistTitle}</h2>
        {board.kind === 'loading' ? (
          <p className="muted">{h.reading}</p>
        ) : (
          <>
            <p className="muted" role="status">
              {remaining === 0 ? h.allDone : h.remaining(remaining)}
            </p>
            <ul className="home-checklist">
              {checks.map((check) => (
                <li
                  key={check.id}
                  className={check.done ? 'home-check home-check-done' : 'home-check'}
                  data-check={check.id}
                  data-done={check.done}
                >
                  <span className="home-check-mark" aria-hidden="true">
                    {check.done ? '✓' : '○'}
                  </span>
                  <div>
                    <strong>{check.title}</strong>
                    <span className="visually-hidden">{check.done ? ` — ${h.done}` : ` — ${h.toDo}`}</span>
                    <p className="small">{check.detail}</p>
                    {check.link && <a href={check.link.href}>{check.link.label}</a>}
                  </div>
                </li>
              ))}
            </ul>
          </>
        )}
      </section>

      {board.kind === 'ready' && board.mcpUrl && (
        <section className="card" aria-labelledby="mcp-title">
          <h2 id="mcp-title">{h.mcpTitle}</h2>
          <p className="small">{h.mcpIntro}</p>
          <p>
            <code id="mcp-url">{board.mcpUrl}</code> <CopyButton value={board.mcpUrl} label={h.copy} copied={h.copied} />
          </p>
        </section>
      )}
    </div>
  );
}
