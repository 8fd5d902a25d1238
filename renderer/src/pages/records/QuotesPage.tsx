import { useId, useState } from 'react';
import { DEVIS_SORTS, DEVIS_STATUSES, type DevisSort, type DevisStatus } from '../../../../shared/devis.js';
import type { PageProps } from '../../slices/types.js';
import { QuoteList, useQuotes } from './QuoteList.js';
import { RECORDS_STRINGS } from './strings.js';

/** /console/quotes: the cabinet's quotes, newest or cheapest first, filtered by status. */
export function QuotesPage({ lang, t }: PageProps) {
  const s = RECORDS_STRINGS[lang];
  const statusId = useId();
  const [status, setStatus] = useState<DevisStatus | ''>('');
  const sortId = useId();
  const [sort, setSort] = useState<DevisSort>('-created_at');
  const quotes = useQuotes({ status: status || undefined, sort });
  return (
    <section className="records">
      <h1>{s.quotesTitle}</h1>
      <p className="muted">{s.quotesIntro}</p>
      <form className="records-search" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={statusId}>{s.filterStatus}</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(DEVIS_STATUSES.find((v) => v === e.target.value) ?? '')}>
            <option value="">{s.allStatuses}</option>
            {DEVIS_STATUSES.map((value) => (
              <option key={value} value={value}>
                {s.quoteStatuses[value]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={sortId}>{s.sortBy}</label>
          <select id={sortId} value={sort} onChange={(e) => setSort(DEVIS_SORTS.find((v) => v === e.target.value) ?? '-created_at')}>
            <option value="-created_at">{s.sortNewest}</option>
            <option value="tarif_eur">{s.sortPremium}</option>
          </select>
        </div>
      </form>
      <QuoteList lang={lang} t={t} quotes={quotes} showClient />
    </section>
  );
}
