import { useCallback, useId, useState } from 'react';
import { listConsoleClients } from '../../../../shared/console-records.js';
import { CLIENT_SORTS, CLIENT_TYPES, type Client, type ClientSort } from '../../../../shared/crm.js';
import { call } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import { go } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { ClientDetail } from './ClientDetail.js';
import { ClientForm } from './ClientForm.js';
import { ImportClientsPage } from './ImportClientsPage.js';
import { IMPORT_STRINGS } from './importStrings.js';
import { clientName, clientPath, idInPath, usePagedList } from './common.js';
import { formatDate, RECORDS_STRINGS } from './strings.js';

const PAGE_SIZE = 50;

/** /console/clients: the list with search and "new client"; /console/clients/<id>: one client. */
export function ClientsPage(props: PageProps) {
  const clientId = idInPath('clients');
  // A client's id is a UUID: "import" is never one.
  if (clientId === 'import') return <ImportClientsPage {...props} />;
  return clientId === null ? <ClientList {...props} /> : <ClientDetail {...props} clientId={clientId} />;
}

function ClientList({ lang, t }: PageProps) {
  const s = RECORDS_STRINGS[lang];
  const searchId = useId();
  const typeId = useId();
  const [search, setSearch] = useState('');
  const [type, setType] = useState<Client['type'] | ''>('');
  const sortId = useId();
  const [sort, setSort] = useState<ClientSort>('-created_at');
  const [creating, setCreating] = useState(false);
  const q = search.trim();

  const page = useCallback(
    (cursor?: string) =>
      call(listConsoleClients, { query: { limit: PAGE_SIZE, q: q || undefined, type: type || undefined, sort, cursor } }),
    [q, type, sort],
  );

  // Every keystroke asks again; an answer to an older search is dropped.
  const { items: clients, error, hasMore, loadMore } = usePagedList(page);

  return (
    <section className="records">
      <div className="records-heading">
        <h1>{s.clientsTitle}</h1>
        <div className="records-heading-actions">
          <a className="button" href="/console/clients/import">
            {IMPORT_STRINGS[lang].importClients}
          </a>
          {!creating && (
            <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
              {s.newClient}
            </button>
          )}
        </div>
      </div>
      <p className="muted">{s.clientsIntro}</p>
      {creating && (
        <div className="card records-panel">
          <h2>{s.newClient}</h2>
          <ClientForm
            s={s}
            lang={lang}
            onCancel={() => setCreating(false)}
            onDone={(client) => (client ? go(clientPath(client.client_id)) : setCreating(false))}
          />
        </div>
      )}
      <form className="records-search" role="search" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={searchId}>{s.search}</label>
          <input
            id={searchId}
            type="search"
            value={search}
            maxLength={100}
            aria-describedby={`${searchId}-hint`}
            onChange={(e) => setSearch(e.target.value)}
          />
          <span id={`${searchId}-hint`} className="muted small">
            {s.searchHint}
          </span>
        </div>
        <div className="field">
          <label htmlFor={typeId}>{s.filterType}</label>
          <select id={typeId} value={type} onChange={(e) => setType(CLIENT_TYPES.find((v) => v === e.target.value) ?? '')}>
            <option value="">{s.allTypes}</option>
            <option value="person">{s.person}</option>
            <option value="company">{s.company}</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={sortId}>{s.sortBy}</label>
          <select id={sortId} value={sort} onChange={(e) => setSort(CLIENT_SORTS.find((v) => v === e.target.value) ?? '-created_at')}>
            <option value="-created_at">{s.sortNewest}</option>
            <option value="name">{s.sortName}</option>
          </select>
        </div>
      </form>
      {error && <Alert>{error}</Alert>}
      {clients === null && !error && <Loading t={t} />}
      {clients?.length === 0 && <p className="muted">{q ? s.noClientsFound(q) : s.noClients}</p>}
      {clients && clients.length > 0 && (
        <ul className="records-cards" aria-label={s.clientsTitle}>
          {clients.map((client) => (
            <li key={client.client_id} className="records-card">
              <div className="records-card-head">
                <a className="records-card-title" href={clientPath(client.client_id)}>
                  {clientName(client, s)}
                </a>
                <span className="badge records-type">{client.type === 'person' ? s.person : s.company}</span>
              </div>
              <p className="records-card-line muted">
                {[client.email, client.phone, client.address?.city].filter((part) => part).join(' · ') || '—'}
              </p>
              <p className="records-card-line muted small">{s.created(formatDate(lang, client.created_at))}</p>
            </li>
          ))}
        </ul>
      )}
      {hasMore && (
        <div className="records-more">
          <button type="button" className="button" onClick={() => void loadMore()}>
            {s.loadMore}
          </button>
        </div>
      )}
    </section>
  );
}
