import { useEffect, useState } from 'react';
import { shortJobReference } from '../../../../shared/automation.js';
import type { Client, Opportunity } from '../../../../shared/crm.js';
import { eraseConsoleClient, getConsoleClient, listClientOpportunities } from '../../../../shared/console-records.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { Alert, Loading } from '../../Layout.js';
import { go } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { ClientForm } from './ClientForm.js';
import { clientName, Notice, opportunityPath } from './common.js';
import { jobPath } from '../automation/jobView.js';
import { ClientComparisons } from '../compare/ClientComparisons.js';
import { COMPARE_STRINGS } from '../compare/strings.js';
import { QuoteList, useQuotes } from './QuoteList.js';
import { formatDate, formatEuros, RECORDS_STRINGS, type RecordsStrings } from './strings.js';

type Loaded<T> = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; data: T };

/** /console/clients/<id>: the client's contact details (edit, erase), quotes, comparisons and advice documents, jobs and opportunities. */
export function ClientDetail({ lang, t, clientId }: PageProps & { clientId: string }) {
  const s = RECORDS_STRINGS[lang];
  const c = COMPARE_STRINGS[lang];
  const [client, setClient] = useState<Loaded<Client>>({ kind: 'loading' });
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const quotes = useQuotes({ clientId });

  useEffect(() => {
    let cancelled = false;
    void call(getConsoleClient, { params: { client_id: clientId } }).then((result) => {
      if (!cancelled) setClient(result.ok ? { kind: 'ready', data: result.data } : { kind: 'error', message: result.error.message });
    });
    return () => {
      cancelled = true;
    };
  }, [clientId]);

  const erasing = useConfirmation(
    (target: Client) => call(eraseConsoleClient, { params: { client_id: target.client_id } }),
    (_target, result) => (result.ok ? go('/console/clients') : setError(result.error.message)),
  );

  const back = (
    <p>
      <a className="back-link" href="/console/clients">{`← ${s.allClients}`}</a>
    </p>
  );
  if (client.kind === 'loading') return <Loading t={t} />;
  if (client.kind === 'error') {
    return (
      <section className="records">
        {back}
        <Alert>{client.message}</Alert>
      </section>
    );
  }
  const data = client.data;
  const name = clientName(data, s);
  return (
    <section className="records">
      {back}
      <div className="records-heading">
        <h1>{name}</h1>
        <span className="badge records-type">{data.type === 'person' ? s.person : s.company}</span>
      </div>
      {notice && <Notice>{notice}</Notice>}
      {error && <Alert>{error}</Alert>}
      <div className="card records-panel">
        <h2>{s.contact}</h2>
        {editing ? (
          <ClientForm
            s={s}
            lang={lang}
            client={data}
            onCancel={() => setEditing(false)}
            onDone={(updated) => {
              setEditing(false);
              if (updated) setClient({ kind: 'ready', data: updated });
              setNotice(updated ? s.saved : s.noChange);
            }}
          />
        ) : (
          <>
            <ContactDetails client={data} s={s} lang={lang} />
            <div className="actions">
              <button type="button" className="button button-danger" onClick={() => erasing.ask(data)}>
                {s.erase}
              </button>
              <button
                type="button"
                className="button"
                onClick={() => {
                  setNotice(null);
                  setEditing(true);
                }}
              >
                {s.edit}
              </button>
            </div>
          </>
        )}
      </div>
      <h2>{s.clientQuotes}</h2>
      <p className="records-price-link">
        <a className="button button-primary" href={`/console/pricing?client=${encodeURIComponent(data.client_id)}`}>
          {s.priceForClient}
        </a>
      </p>
      {quotes.quotes?.length === 0 ? (
        <p className="muted">{s.noClientQuotes}</p>
      ) : (
        <QuoteList lang={lang} t={t} quotes={quotes} showClient={false} />
      )}
      <h2>{c.clientComparisons}</h2>
      <ClientComparisons clientId={clientId} lang={lang} t={t} />
      <h2>{s.clientJobs}</h2>
      <ClientJobs quotes={quotes.quotes} s={s} lang={lang} />
      <h2>{s.clientOpportunities}</h2>
      <ClientOpportunities clientId={clientId} s={s} lang={lang} t={t} />
      <ConfirmStep
        confirmation={erasing}
        title={() => s.eraseTitle(name)}
        text={s.eraseText}
        confirmLabel={s.eraseConfirm}
        cancelLabel={s.cancel}
      />
    </section>
  );
}

function ContactDetails({ client, s, lang }: { client: Client; s: RecordsStrings; lang: PageProps['lang'] }) {
  const address = client.address;
  const rows: [string, string | null][] = [
    [s.lastName, client.last_name],
    [s.firstName, client.first_name],
    [s.companyName, client.company_name],
    [s.siret, client.siret],
    [s.email, client.email],
    [s.phone, client.phone],
    [s.birthDate, client.birth_date && formatDate(lang, client.birth_date)],
    [
      s.address,
      address && [address.line1, address.line2, `${address.postcode} ${address.city}`, address.country].filter((part) => part).join(', '),
    ],
  ];
  return (
    <dl className="records-details">
      {rows
        .filter(([, value]) => value)
        .map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  );
}

/** The jobs that priced the client's quotes (from the quotes loaded), each linked to its page. */
function ClientJobs({ quotes, s, lang }: { quotes: ReturnType<typeof useQuotes>['quotes']; s: RecordsStrings; lang: PageProps['lang'] }) {
  if (quotes === null) return null;
  const jobs = quotes.flatMap((quote) => (quote.job ? [{ ...quote.job, product: quote.product_label }] : []));
  if (jobs.length === 0) return <p className="muted">{s.noClientJobs}</p>;
  return (
    <>
      <p className="muted small">{s.clientJobsIntro}</p>
      <ul className="records-simple-list">
        {jobs.map((job) => (
          <li key={job.job_id}>
            <a href={jobPath(job.job_id)}>{`${job.product} · ${s.job(shortJobReference(job.job_id))}`}</a>
            <span className="muted">{` · ${s.jobStatuses[job.status]} · ${formatDate(lang, job.created_at)}`}</span>
          </li>
        ))}
      </ul>
    </>
  );
}

function ClientOpportunities({
  clientId,
  s,
  lang,
  t,
}: {
  clientId: string;
  s: RecordsStrings;
  lang: PageProps['lang'];
  t: PageProps['t'];
}) {
  const [opportunities, setOpportunities] = useState<Loaded<Opportunity[]>>({ kind: 'loading' });
  useEffect(() => {
    let cancelled = false;
    void call(listClientOpportunities, { params: { client_id: clientId } }).then((result) => {
      if (!cancelled)
        setOpportunities(result.ok ? { kind: 'ready', data: result.data.data } : { kind: 'error', message: result.error.message });
    });
    return () => {
      cancelled = true;
    };
  }, [clientId]);
  if (opportunities.kind === 'loading') return <Loading t={t} />;
  if (opportunities.kind === 'error') return <Alert>{opportunities.message}</Alert>;
  if (opportunities.data.length === 0) return <p className="muted">{s.noClientOpportunities}</p>;
  return (
    <>
      <p className="muted small">{s.clientOpportunitiesIntro}</p>
      <ul className="records-simple-list">
        {opportunities.data.map((opportunity) => (
          <li key={opportunity.id}>
            <a href={opportunityPath(opportunity.id)}>{opportunity.title}</a>
            <span className="muted">{` · ${opportunity.product} · ${formatEuros(lang, opportunity.expected_value_eur)} · `}</span>
            <span className={`badge records-stage records-stage-${opportunity.stage}`}>{s.stages[opportunity.stage]}</span>
          </li>
        ))}
      </ul>
    </>
  );
}
