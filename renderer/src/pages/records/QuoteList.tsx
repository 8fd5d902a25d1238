import { useCallback, useState } from 'react';
import { shortJobReference } from '../../../../shared/automation.js';
import { getConsoleDevisPdf } from '../../../../shared/console-automation.js';
import { attachConsoleDevisClient, listConsoleDevis, signConsoleDevis, type ConsoleDevis } from '../../../../shared/console-records.js';
import type { DevisSort, DevisStatus } from '../../../../shared/devis.js';
import { pathTo } from '../../../../shared/endpoint.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import type { Lang, Strings } from '../../i18n.js';
import { Alert, Loading } from '../../Layout.js';
import { ClientPicker, type ChosenClient } from '../automation/ClientPicker.js';
import { jobPath } from '../automation/jobView.js';
import { AUTOMATION_STRINGS } from '../automation/strings.js';
import { clientPath, Notice, usePagedList } from './common.js';
import { formatDate, formatEuros, RECORDS_STRINGS, type RecordsStrings } from './strings.js';

const PAGE_SIZE = 50;

function clientLabel(quote: ConsoleDevis, s: RecordsStrings): string {
  return quote.client_name ?? (quote.client_erased ? s.erasedClient : s.noClient);
}

/** The cabinet's quotes (or one client's), newest or cheapest first, a page at a time. */
export function useQuotes(filter: { status?: DevisStatus; clientId?: string; sort?: DevisSort }) {
  const { status, clientId, sort } = filter;
  const page = useCallback(
    (cursor?: string) => call(listConsoleDevis, { query: { limit: PAGE_SIZE, status, client_id: clientId, sort, cursor } }),
    [status, clientId, sort],
  );
  const { items, setItems, error, setError, hasMore, loadMore } = usePagedList(page);

  function replace(quote: ConsoleDevis) {
    setItems((current) => current?.map((q) => (q.devis_id === quote.devis_id ? quote : q)) ?? null);
  }

  return { quotes: items, error, setError, hasMore, loadMore, replace };
}

/**
 * Quotes as cards (they fit a phone): the client, the product and insurer, status and premium,
 * signed or not, the PDF, the job that priced it, "mark as signed" for a priced one, and "attach to
 * a client" for one priced without.
 */
export function QuoteList({
  lang,
  t,
  quotes,
  showClient,
}: {
  lang: Lang;
  t: Strings;
  quotes: ReturnType<typeof useQuotes>;
  showClient: boolean;
}) {
  const s = RECORDS_STRINGS[lang];
  const [notice, setNotice] = useState<string | null>(null);
  const signing = useConfirmation(
    (quote: ConsoleDevis) => call(signConsoleDevis, { params: { devis_id: quote.devis_id }, body: {} }),
    (_quote, result) => {
      if (!result.ok) return quotes.setError(result.error.message);
      quotes.replace(result.data);
      setNotice(s.signedNotice);
    },
  );

  if (quotes.error) return <Alert>{quotes.error}</Alert>;
  if (quotes.quotes === null) return <Loading t={t} />;
  if (quotes.quotes.length === 0) return <p className="muted">{s.noQuotes}</p>;
  return (
    <>
      {notice && <Notice>{notice}</Notice>}
      <ul className="records-cards">
        {quotes.quotes.map((quote) => (
          <QuoteCard
            key={quote.devis_id}
            quote={quote}
            lang={lang}
            s={s}
            showClient={showClient}
            onSign={() => signing.ask(quote)}
            onAttached={(attached) => (quotes.replace(attached), setNotice(s.attachedNotice(attached.client_name ?? '')))}
          />
        ))}
      </ul>
      {quotes.hasMore && (
        <div className="records-more">
          <button type="button" className="button" onClick={() => void quotes.loadMore()}>
            {s.loadMore}
          </button>
        </div>
      )}
      <ConfirmStep
        confirmation={signing}
        title={(quote) => s.signTitle(clientLabel(quote, s))}
        text={s.signText}
        confirmLabel={s.signConfirm}
        cancelLabel={s.cancel}
      />
    </>
  );
}

function QuoteCard({
  quote,
  lang,
  s,
  showClient,
  onSign,
  onAttached,
}: {
  quote: ConsoleDevis;
  lang: Lang;
  s: RecordsStrings;
  showClient: boolean;
  onSign: () => void;
  onAttached: (quote: ConsoleDevis) => void;
}) {
  const name = clientLabel(quote, s);
  const [attaching, setAttaching] = useState(false);
  const [attachError, setAttachError] = useState<string | null>(null);
  const canAttach = quote.client_id === null && quote.status !== 'signed';

  async function attach(client: ChosenClient | null) {
    if (!client) return;
    const result = await call(attachConsoleDevisClient, { params: { devis_id: quote.devis_id }, body: { client_id: client.client_id } });
    if (!result.ok) return setAttachError(result.error.message);
    setAttaching(false);
    onAttached(result.data);
  }
  return (
    <li className="records-card" aria-label={`${name} · ${quote.product_label}`} data-status={quote.status}>
      <div className="records-card-head">
        {showClient &&
          (quote.client_id !== null && quote.client_name !== null ? (
            <a className="records-card-title" href={clientPath(quote.client_id)}>
              {name}
            </a>
          ) : (
            <span className="records-card-title muted">{name}</span>
          ))}
        <span className={`badge records-status records-status-${quote.status}`}>
          {quote.status === 'failed' && quote.job?.status === 'cancelled' ? s.quoteCancelled : s.quoteStatuses[quote.status]}
        </span>
      </div>
      <p className="records-card-line">
        <strong>{quote.product_label}</strong>
        <span className="muted">{` · ${quote.insurer_name} · ${formatDate(lang, quote.created_at)}`}</span>
      </p>
      <p className="records-card-line">
        <span>{`${s.premium} `}</span>
        <strong>{quote.tarif_eur === null ? s.notPriced : formatEuros(lang, quote.tarif_eur)}</strong>
        {quote.suspens && <span className="muted small">{` · ${quote.suspens}`}</span>}
      </p>
      <p className="records-card-line">
        {quote.signed_at ? <strong>{s.signedOn(formatDate(lang, quote.signed_at))}</strong> : <span className="muted">{s.notSigned}</span>}
      </p>
      <p className="records-card-actions">
        {quote.pdf_available ? (
          <a href={pathTo(getConsoleDevisPdf, { devis_id: quote.devis_id })} download>
            {s.downloadPdf}
          </a>
        ) : (
          <span className="muted small">{s.noPdf}</span>
        )}
        {quote.job && (
          <span className="small">
            {`${s.pricedBy} `}
            <a href={jobPath(quote.job.job_id)}>{s.job(shortJobReference(quote.job.job_id))}</a>
            {` (${s.jobStatuses[quote.job.status]})`}
          </span>
        )}
        {quote.status === 'priced' && quote.client_id !== null && !quote.client_erased && (
          <button type="button" className="button records-small-button" onClick={onSign}>
            {s.sign}
          </button>
        )}
        {canAttach && !attaching && (
          <button type="button" className="button records-small-button" onClick={() => setAttaching(true)}>
            {s.attachClient}
          </button>
        )}
      </p>
      {canAttach && attaching && (
        <div className="records-attach">
          <ClientPicker lang={lang} s={AUTOMATION_STRINGS[lang]} chosen={null} onChoose={(client) => void attach(client)} />
          {attachError !== null && <Alert>{attachError}</Alert>}
          <button type="button" className="button records-small-button" onClick={() => setAttaching(false)}>
            {s.cancel}
          </button>
        </div>
      )}
    </li>
  );
}
