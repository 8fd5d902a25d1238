import { useState, type FormEvent } from 'react';
import { grantConsoleCredits } from '../../../../shared/console-admin.js';
import type { ValidationIssue } from '../../../../shared/errors.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { TextField } from '../../components/Field.js';
import type { Lang } from '../../i18n.js';
import { describeIssue } from '../../issues.js';
import { Alert } from '../../Layout.js';
import { Notice, errorMessage } from './common.js';
import { ADMIN_STRINGS } from './strings.js';

type Grant = { amount: number; note: string };

/**
 * "Add credits" on the Wallet page, for an administrator of a cabinet that does not sync: an amount
 * and a reason, confirmed, then the balance shown again. A cabinet that syncs is told where its
 * credits are added instead.
 */
export function CreditGrant({ lang, synced, onGranted }: { lang: Lang; synced: boolean; onGranted: () => Promise<void> }) {
  const s = ADMIN_STRINGS[lang];
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const [issues, setIssues] = useState<{ amount?: string; note?: string }>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const granting = useConfirmation(
    (grant: Grant) => call(grantConsoleCredits, { body: grant }),
    async (grant, result) => {
      if (!result.ok) {
        const byField: { amount?: string; note?: string } = {};
        if (result.error.error === 'validation_error' && Array.isArray(result.error.details))
          for (const issue of result.error.details as ValidationIssue[]) {
            const field = issue.path.split('.')[1];
            if (field === 'amount' || field === 'note') byField[field] = describeIssue(issue, lang);
          }
        setIssues(byField);
        return setError(errorMessage(result, lang));
      }
      setAmount('');
      setNote('');
      setNotice(s.grantDone(grant.amount, result.data.balance));
      await onGranted();
    },
  );

  if (synced) return <p className="muted small">{s.grantOnHub}</p>;

  function ask(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setNotice(null);
    setError(null);
    const n = Number(amount.trim());
    // Checked here so that the dialog asks about a number; the service checks everything again.
    if (!Number.isInteger(n) || n < 1) return setIssues({ amount: s.grantAmountInvalid });
    setIssues({});
    granting.ask({ amount: n, note: note.trim() });
  }

  return (
    <form className="form" noValidate onSubmit={ask} aria-labelledby="grant-title">
      <h3 id="grant-title" className="admin-subtitle">
        {s.grantTitle}
      </h3>
      <TextField
        id="grant-amount"
        label={s.grantAmount}
        type="number"
        inputMode="numeric"
        min={1}
        step={1}
        required
        error={issues.amount ?? null}
        value={amount}
        onValue={setAmount}
      />
      <TextField
        id="grant-note"
        label={s.grantNote}
        hint={s.grantNoteHint}
        type="text"
        maxLength={200}
        required
        error={issues.note ?? null}
        value={note}
        onValue={setNote}
      />
      {error !== null && <Alert>{error}</Alert>}
      {notice !== null && <Notice>{notice}</Notice>}
      <div>
        <button type="submit" className="button button-primary" disabled={granting.busy} aria-busy={granting.busy}>
          {s.grantButton}
        </button>
      </div>
      <ConfirmStep
        confirmation={granting}
        title={(grant) => s.grantConfirmTitle(grant.amount)}
        text={s.grantConfirmText}
        confirmLabel={s.grantButton}
        cancelLabel={s.cancel}
        tone="primary"
      />
    </form>
  );
}
