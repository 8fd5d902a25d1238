import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import { consoleSearch, type SearchResults } from '../../../../shared/console-search.js';
import { call } from '../../api.js';
import { Alert } from '../../Layout.js';
import { go, useLocation } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { jobPath } from '../automation/jobView.js';
import { clientName, clientPath } from '../records/common.js';
import { formatDate, RECORDS_STRINGS } from '../records/strings.js';
import { searchUrl } from './SearchBox.js';
import { SEARCH_STRINGS } from './strings.js';

type Found = { kind: 'idle' } | { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; results: SearchResults };

/** One kind of record found: its heading, its links, and a line when more match than are shown. */
function Group({
  title,
  items,
  more,
  moreText,
}: {
  title: string;
  items: { key: string; link: ReactNode }[];
  more: boolean;
  moreText: string;
}) {
  const headingId = useId();
  if (items.length === 0) return null;
  return (
    <section className="card search-group" aria-labelledby={headingId}>
      <h2 id={headingId}>{`${title} (${items.length}${more ? '+' : ''})`}</h2>
      <ul className="search-list">
        {items.map((item) => (
          <li key={item.key}>{item.link}</li>
        ))}
      </ul>
      {more && <p className="muted small">{moreText}</p>}
    </section>
  );
}

/** The groups of a search's results, each record a link to its page. */
function Results({ results, lang }: { results: SearchResults; lang: PageProps['lang'] }) {
  const s = SEARCH_STRINGS[lang];
  const r = RECORDS_STRINGS[lang];
  const { clients, opportunities, devis, jobs } = results;
  const line = (main: string, rest: (string | null)[]) => (
    <>
      <strong>{main}</strong>
      <span className="muted">{rest.filter((part) => part).map((part) => ` · ${part}`)}</span>
    </>
  );
  return (
    <>
      <Group
        title={s.clients}
        more={clients.has_more}
        moreText={s.more}
        items={clients.data.map((c) => ({
          key: c.id,
          link: <a href={clientPath(c.id)}>{line(clientName(c, r), [c.email, c.address?.city ?? null])}</a>,
        }))}
      />
      <Group
        title={s.opportunities}
        more={opportunities.has_more}
        moreText={s.more}
        items={opportunities.data.map((o) => ({
          key: o.id,
          link: (
            <a href={`/console/opportunities/${encodeURIComponent(o.id)}`}>
              {line(o.title, [
                o.contact.company_name ?? [o.contact.first_name, o.contact.last_name].filter((p) => p).join(' '),
                r.stages[o.stage],
              ])}
            </a>
          ),
        }))}
      />
      <Group
        title={s.quotes}
        more={devis.has_more}
        moreText={s.more}
        items={devis.data.map((q) => ({
          key: q.id,
          link: (
            <a href={q.client_id !== null ? clientPath(q.client_id) : q.job ? jobPath(q.job.job_id) : '/console/quotes'}>
              {line(q.client_name ?? s.noClient, [
                q.product_label,
                q.insurer_name,
                r.quoteStatuses[q.status],
                formatDate(lang, q.created_at),
              ])}
            </a>
          ),
        }))}
      />
      <Group
        title={s.jobs}
        more={jobs.has_more}
        moreText={s.more}
        items={jobs.data.map((j) => ({
          key: j.job_id,
          link: (
            <a href={jobPath(j.job_id)}>
              {line(j.insured ?? s.noClient, [j.product_label, j.insurer_name, r.jobStatuses[j.status], formatDate(lang, j.created_at)])}
            </a>
          ),
        }))}
      />
    </>
  );
}

const isEmpty = ({ clients, opportunities, devis, jobs }: SearchResults) =>
  [clients, opportunities, devis, jobs].every((group) => group.data.length === 0);

/** /console/search?q=…: what the text names in the cabinet, by kind. */
export function SearchPage({ lang }: PageProps) {
  const s = SEARCH_STRINGS[lang];
  const location = useLocation();
  const q = (new URLSearchParams(location.search).get('q') ?? '').trim();
  const [text, setText] = useState(q);
  const [found, setFound] = useState<Found>({ kind: 'idle' });
  const inputId = useId();

  useEffect(() => {
    setText(q);
    if (q.length < 2) return setFound({ kind: 'idle' });
    let current = true;
    setFound({ kind: 'loading' });
    void call(consoleSearch, { query: { q } }).then((result) => {
      if (current) setFound(result.ok ? { kind: 'ready', results: result.data } : { kind: 'error', message: result.error.message });
    });
    return () => {
      current = false;
    };
  }, [q, lang]);

  function submit(event: FormEvent) {
    event.preventDefault();
    go(searchUrl(text.trim()), { replace: true });
  }

  return (
    <div className="search-page">
      <section className="card">
        <h1>{s.title}</h1>
        <p className="muted">{s.intro}</p>
        <form role="search" aria-label={s.searchLabel} className="search-form" onSubmit={submit}>
          <label htmlFor={inputId}>{s.searchLabel}</label>
          <div className="search-row">
            <input id={inputId} type="search" value={text} onChange={(e) => setText(e.target.value)} />
            <button type="submit" className="button button-primary">
              {s.go}
            </button>
          </div>
        </form>
      </section>
      <div role="status" aria-live="polite" className="search-status">
        {q !== '' && q.length < 2 && <p>{s.tooShort}</p>}
        {found.kind === 'loading' && <p className="muted">{s.searching}</p>}
        {found.kind === 'ready' && <p>{isEmpty(found.results) ? s.nothing(found.results.q) : s.resultsFor(found.results.q)}</p>}
      </div>
      {found.kind === 'error' && <Alert>{found.message}</Alert>}
      {found.kind === 'ready' && <Results results={found.results} lang={lang} />}
    </div>
  );
}
