import { useEffect, useId, useState } from 'react';
import type { Client } from '../../../../shared/crm.js';
import { createConsoleClient, getConsoleClient, listConsoleClients } from '../../../../shared/console-records.js';
import { call } from '../../api.js';
import type { Lang } from '../../i18n.js';
import { clientName } from '../records/common.js';
import { RECORDS_STRINGS } from '../records/strings.js';
import type { AutomationStrings } from './strings.js';

/** Typing pauses this long before the clients are searched. */
const SEARCH_DELAY_MS = 250;
const MATCHES_SHOWN = 8;

export interface ChosenClient {
  client_id: string;
  name: string;
}

type Search =
  { kind: 'idle' } | { kind: 'searching' } | { kind: 'done'; q: string; clients: Client[] } | { kind: 'error'; message: string };

/** A person's name as typed ("Jeanne Martin") as a new client's: the last word the last name, the rest the first name. */
function personOf(name: string): { type: 'person'; last_name: string; first_name?: string } {
  const words = name.trim().split(/\s+/);
  const last = words.pop() ?? '';
  return { type: 'person', last_name: last, ...(words.length > 0 ? { first_name: words.join(' ') } : {}) };
}

/** The cabinet's one client of exactly this name, else a new client of that name; null when neither could be had. */
export async function findOrCreateClient(name: string, lang: Lang): Promise<ChosenClient | null> {
  const names = RECORDS_STRINGS[lang];
  // The search matches one field at a time: by the last name, then the whole name compared.
  const search = await call(listConsoleClients, { query: { q: personOf(name).last_name, limit: 100 } });
  const same = search.ok ? search.data.data.filter((c) => clientName(c, names).toLocaleLowerCase() === name.toLocaleLowerCase()) : [];
  const only = same.length === 1 ? same[0] : undefined;
  if (only) return { client_id: only.client_id, name: clientName(only, names) };
  const created = await call(createConsoleClient, { body: personOf(name) });
  return created.ok ? { client_id: created.data.client_id, name: clientName(created.data, names) } : null;
}

/** The client named in the page's address (?client=<id>), as the client's page links to Pricing. */
export function useClientFromAddress(lang: Lang): [ChosenClient | null, (client: ChosenClient | null) => void] {
  const [chosen, setChosen] = useState<ChosenClient | null>(null);
  useEffect(() => {
    const id = new URLSearchParams(window.location.search).get('client');
    if (!id) return;
    let cancelled = false;
    void call(getConsoleClient, { params: { client_id: id } }).then((result) => {
      if (!cancelled && result.ok) setChosen({ client_id: result.data.client_id, name: clientName(result.data, RECORDS_STRINGS[lang]) });
    });
    return () => {
      cancelled = true;
    };
    // The address is read once: the language changing does not pick the client again.
  }, []);
  return [chosen, setChosen];
}

/**
 * Who the quote is for: a search of the cabinet's clients by name or email, one click to choose, or
 * the person typed created as a client when the cabinet has no one of that name.
 */
export function ClientPicker({
  lang,
  s,
  chosen,
  onChoose,
}: {
  lang: Lang;
  s: AutomationStrings;
  chosen: ChosenClient | null;
  onChoose: (client: ChosenClient | null) => void;
}) {
  const inputId = useId();
  const hintId = useId();
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState<Search>({ kind: 'idle' });
  const [creating, setCreating] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });

  /** A person named as typed ("Jeanne Martin": first name Jeanne, last name Martin), made a client of the cabinet and chosen. */
  async function createFromTyped() {
    setCreating({ busy: true, error: null });
    const result = await call(createConsoleClient, { body: personOf(typed) });
    if (!result.ok) return setCreating({ busy: false, error: result.error.message });
    setCreating({ busy: false, error: null });
    onChoose({ client_id: result.data.client_id, name: clientName(result.data, RECORDS_STRINGS[lang]) });
  }

  useEffect(() => {
    const q = typed.trim();
    if (q === '' || chosen) return setSearch({ kind: 'idle' });
    let cancelled = false;
    const timer = window.setTimeout(() => {
      setSearch({ kind: 'searching' });
      void call(listConsoleClients, { query: { q, limit: MATCHES_SHOWN } }).then((result) => {
        if (cancelled) return;
        setSearch(result.ok ? { kind: 'done', q, clients: result.data.data } : { kind: 'error', message: result.error.message });
      });
    }, SEARCH_DELAY_MS);
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [typed, chosen]);

  if (chosen) {
    return (
      <div className="field automation-client">
        <span className="automation-label">{s.client}</span>
        <p className="automation-client-chosen">
          <strong>{s.clientChosen(chosen.name)}</strong>{' '}
          <button type="button" className="button" onClick={() => (setTyped(''), onChoose(null))}>
            {s.clientChange}
          </button>
        </p>
      </div>
    );
  }
  const names = RECORDS_STRINGS[lang];
  return (
    <div className="field automation-client">
      <label htmlFor={inputId}>{s.client}</label>
      <input
        id={inputId}
        type="search"
        autoComplete="off"
        value={typed}
        aria-describedby={hintId}
        onChange={(e) => setTyped(e.target.value)}
      />
      <span id={hintId} className="muted small">
        {s.clientHint}
      </span>
      <div role="status" aria-live="polite">
        {search.kind === 'searching' && <span className="muted small">{s.clientSearching}</span>}
        {search.kind === 'error' && <span className="automation-field-error">{search.message}</span>}
        {search.kind === 'done' && search.clients.length === 0 && <span className="muted small">{s.clientNoMatch(search.q)}</span>}
        {creating.error !== null && <span className="automation-field-error">{creating.error}</span>}
      </div>
      {search.kind === 'done' &&
        !search.q.includes('@') &&
        !search.clients.some((c) => clientName(c, names).toLocaleLowerCase() === search.q.toLocaleLowerCase()) && (
          <p>
            <button type="button" className="button" disabled={creating.busy} onClick={() => void createFromTyped()}>
              {s.clientCreate(search.q)}
            </button>
          </p>
        )}
      {search.kind === 'done' && search.clients.length > 0 && (
        <ul className="automation-client-matches" aria-label={s.client}>
          {search.clients.map((client) => {
            const name = clientName(client, names);
            return (
              <li key={client.client_id}>
                <button type="button" className="button" onClick={() => onChoose({ client_id: client.client_id, name })}>
                  {s.clientOption(name, client.email)}
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
