import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { AUDIT_ACTIONS, listAuditEntries, type AuditAction, type AuditEntry } from '../../../../shared/audit.js';
import { listUsers } from '../../../../shared/console-admin.js';
import { call } from '../../api.js';
import { DataTable } from '../../components/DataTable.js';
import { SelectField, TextField } from '../../components/Field.js';
import { Alert } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { errorMessage, useResource } from '../admin/common.js';
import { formatDateTime } from '../admin/strings.js';
import { OFFICE_STRINGS, type OfficeStrings } from './strings.js';

const PAGE_SIZE = 50;

interface Filters {
  action: AuditAction | '';
  userId: string;
  since: string;
  until: string;
}

/** A date input's day as the start (or the end) of that day, local time, in ISO. */
function dayBound(day: string, end: boolean): string | undefined {
  if (day === '') return undefined;
  const date = new Date(`${day}T00:00:00`);
  if (end) date.setDate(date.getDate() + 1);
  return date.toISOString();
}

function whereFrom(entry: AuditEntry, s: OfficeStrings): string {
  const listener = { loopback: s.thisComputer, lan: s.officeNetwork, cli: s.commandLine, internal: s.courtier }[entry.listener];
  return entry.address && entry.listener === 'lan' ? `${entry.address} (${listener})` : listener;
}

/** /console/audit (admins): the cabinet's audit log, newest first, filtered by action, user and dates; older pages on demand. */
export function AuditPage({ lang }: PageProps) {
  const s = OFFICE_STRINGS[lang];
  const [users] = useResource(listUsers, lang);
  const [filters, setFilters] = useState<Filters>({ action: '', userId: '', since: '', until: '' });
  const [applied, setApplied] = useState<Filters>(filters);
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(
    async (wanted: Filters, before: string | undefined) => {
      setBusy(true);
      const result = await call(listAuditEntries, {
        query: {
          action: wanted.action === '' ? undefined : wanted.action,
          user_id: wanted.userId === '' ? undefined : wanted.userId,
          since: dayBound(wanted.since, false),
          until: before ?? dayBound(wanted.until, true),
          limit: PAGE_SIZE,
        },
      });
      setBusy(false);
      if (!result.ok) return setError(errorMessage(result, lang));
      setError(null);
      setMore(result.data.data.length === PAGE_SIZE);
      setEntries((current) => (before === undefined ? result.data.data : [...(current ?? []), ...result.data.data]));
    },
    [lang],
  );

  useEffect(() => {
    void load(applied, undefined);
  }, [applied, load]);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setApplied(filters);
  }

  const userOptions = [
    { value: '', label: s.allUsers },
    ...(users.kind === 'ready' ? users.data.map((u) => ({ value: u.user_id, label: u.email })) : []),
  ];
  return (
    <div className="admin-page">
      <h1>{s.auditTitle}</h1>
      <p className="muted">{s.auditIntro}</p>
      <section className="card" aria-label={s.filter}>
        <form className="form" onSubmit={submit}>
          <div className="admin-grid admin-grid-4">
            <SelectField
              id="audit-action"
              label={s.filterAction}
              value={filters.action}
              options={[{ value: '' as const, label: s.allActions }, ...AUDIT_ACTIONS.map((a) => ({ value: a, label: s.actions[a] }))]}
              onValue={(action) => setFilters({ ...filters, action })}
            />
            <SelectField
              id="audit-user"
              label={s.filterUser}
              value={filters.userId}
              options={userOptions}
              onValue={(userId) => setFilters({ ...filters, userId })}
            />
            <TextField
              id="audit-since"
              label={s.filterSince}
              type="date"
              value={filters.since}
              onValue={(since) => setFilters({ ...filters, since })}
            />
            <TextField
              id="audit-until"
              label={s.filterUntil}
              type="date"
              value={filters.until}
              onValue={(until) => setFilters({ ...filters, until })}
            />
          </div>
          <div>
            <button type="submit" className="button button-primary" disabled={busy}>
              {s.filter}
            </button>
          </div>
        </form>
      </section>
      <section className="card">
        {error !== null && <Alert>{error}</Alert>}
        {entries !== null && (
          <DataTable
            label={s.auditTitle}
            columns={[{ header: s.when }, { header: s.what }, { header: s.who }, { header: s.from }, { header: s.target }]}
            items={entries}
            rowKey={(entry) => entry.id}
            empty={s.noEntries}
            row={(entry) => (
              <>
                <td>{formatDateTime(lang, entry.at)}</td>
                <th scope="row">
                  {s.actions[entry.action]}
                  {entry.result === 'failure' && <span className="audit-failed"> ({s.failed})</span>}
                  {!entry.cabinet_scoped && <span className="muted small"> · {s.installWide}</span>}
                </th>
                <td>{entry.actor.label ?? (entry.actor.kind === 'anonymous' ? '—' : entry.actor.kind)}</td>
                <td>{whereFrom(entry, s)}</td>
                <td>
                  <TargetCell entry={entry} />
                </td>
              </>
            )}
          />
        )}
        {more && entries !== null && (
          <button type="button" className="button" disabled={busy} onClick={() => void load(applied, entries[entries.length - 1]?.at)}>
            {s.older}
          </button>
        )}
      </section>
    </div>
  );
}

/**
 * What an entry is about, as a person knows it: a key by its name, a webhook by its host, beside
 * the id (kept for whoever matches it with the API); any other target by its id.
 */
function TargetCell({ entry }: { entry: Pick<AuditEntry, 'target' | 'details'> }) {
  if (entry.target === null) return null;
  const details = entry.details;
  const named = typeof details.name === 'string' ? details.name : typeof details.host === 'string' ? details.host : null;
  if (named === null) return <span className="admin-mono">{entry.target}</span>;
  return (
    <>
      {named} <span className="admin-mono muted small">{entry.target}</span>
    </>
  );
}
