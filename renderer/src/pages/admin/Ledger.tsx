import type { ConsoleWallet } from '../../../../shared/console-admin.js';
import type { Lang } from '../../i18n.js';
import { DataTable } from '../../components/DataTable.js';
import { jobPath } from '../automation/jobView.js';
import { clientPath } from '../records/common.js';
import { ADMIN_STRINGS, formatDateTime } from './strings.js';

type LedgerEntry = ConsoleWallet['ledger'][number];

/** What a movement was for: the pricing by its client and product (each a link), else its note. */
function Movement({ entry, lang }: { entry: LedgerEntry; lang: Lang }) {
  const s = ADMIN_STRINGS[lang];
  const pricing = entry.pricing;
  return (
    <>
      <span className="ledger-kind">{s.kinds[entry.kind]}</span>
      {pricing !== null ? (
        <span className="ledger-detail">
          {pricing.client_id !== null && pricing.client_name !== null ? (
            <a href={clientPath(pricing.client_id)}>{pricing.client_name}</a>
          ) : (
            <span className="muted">{pricing.client_id === null ? s.ledgerNoClient : s.ledgerErasedClient}</span>
          )}
          {' · '}
          <a href={jobPath(pricing.job_id)}>{s.ledgerPricing(pricing.product_label, pricing.insurer_name)}</a>
        </span>
      ) : entry.note !== null ? (
        <span className="ledger-detail">{entry.note}</span>
      ) : entry.job_id !== null ? (
        <span className="ledger-detail muted">{s.ledgerOtherInstall}</span>
      ) : null}
    </>
  );
}

/** The wallet's recent movements: three columns, so that a phone's width holds them. */
export function Ledger({ entries, lang }: { entries: ConsoleWallet['ledger']; lang: Lang }) {
  const s = ADMIN_STRINGS[lang];
  return (
    <DataTable
      label={s.ledger}
      empty={s.noLedger}
      columns={[{ header: s.date }, { header: s.movement }, { header: s.amount, className: 'admin-number' }]}
      items={entries}
      rowKey={(entry) => entry.id}
      row={(entry) => (
        <>
          <td className="ledger-date">{formatDateTime(lang, entry.created_at)}</td>
          <td>
            <Movement entry={entry} lang={lang} />
          </td>
          <td className="admin-number">{entry.amount > 0 ? `+${entry.amount}` : entry.amount}</td>
        </>
      )}
    />
  );
}
