import { useRef, useState } from 'react';
import { discardSyncRefused, listSyncRefused, resendSyncRefused, type SyncRefusedChange } from '../../../../shared/console-sync.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import type { Lang } from '../../i18n.js';
import { Alert } from '../../Layout.js';
import { ChangesTable, FeedbackLine, RowActions, type Said } from './ChangesTable.js';
import { absoluteTime, kindName, recordOf } from './format.js';
import type { SyncStrings } from './strings.js';
import { useCountedList } from './useCountedList.js';
import { refreshSyncStatus } from './useSyncStatus.js';

/** The refused changes, read again when their count moves (useCountedList). */
const readRefused = () => call(listSyncRefused);

/**
 * The changes made here that the hub refused (administrators: their fields may hold personal data),
 * each with Send again (once the hub is updated, or what it refused changed) and Discard (asked
 * first). Either takes the change off the list; what became of it is said above the list.
 */
export function RefusedByHub({ s, lang, count }: { s: SyncStrings; lang: Lang; count: number }) {
  const { list: refused, error, reload } = useCountedList(count, readRefused);
  const [feedback, setFeedback] = useState<Said | null>(null);
  const [sending, setSending] = useState<string | null>(null);
  const said = useRef(0);
  const say = (tone: Said['tone'], text: string) => setFeedback({ id: ++said.current, tone, text });
  const readAgain = () => Promise.all([reload(), refreshSyncStatus()]);

  const discarding = useConfirmation(
    (change: SyncRefusedChange) => call(discardSyncRefused, { params: { hlc: change.hlc } }),
    async (change, result) => {
      await readAgain();
      say(result.ok ? 'notice' : 'error', result.ok ? s.refusedDiscarded(recordOf(change, s)) : result.error.message);
    },
  );
  const working = sending !== null || discarding.busy;

  async function sendAgain(change: SyncRefusedChange) {
    if (working) return;
    setSending(change.hlc);
    setFeedback(null);
    const result = await call(resendSyncRefused, { params: { hlc: change.hlc } });
    await readAgain();
    setSending(null);
    say(result.ok ? 'notice' : 'error', result.ok ? s.refusedSent(recordOf(change, s)) : result.error.message);
  }

  if (count === 0 && feedback === null) return null;
  return (
    <section className="sync-set-aside">
      <h3>{s.refusedTitle}</h3>
      <p className="muted">{s.refusedIntro}</p>
      {error !== null && <Alert>{error}</Alert>}
      {feedback !== null && <FeedbackLine feedback={feedback} testId="sync-refused-feedback" />}
      {refused !== null && refused.length > 0 && (
        <ChangesTable
          title={s.refusedTitle}
          testId="sync-refused-list"
          columns={[s.refusedColumns.when, s.refusedColumns.what, s.refusedColumns.why, s.refusedColumns.actions]}
        >
          {refused.map((change) => (
            <tr key={change.hlc}>
              <td>{absoluteTime(change.refused_at, lang)}</td>
              <td>
                {kindName(change.kind, s)} <span className="muted small sync-mono">{change.record_id}</span>
              </td>
              <td>
                {s.refusedReasons[change.code] ?? change.code} <span className="muted small">({change.message})</span>
              </td>
              <td>
                <RowActions
                  working={working}
                  busy={sending === change.hlc}
                  label={s.sendAgain}
                  ariaLabel={s.sendAgainLabel(recordOf(change, s))}
                  onAct={() => void sendAgain(change)}
                  discardLabel={s.discard}
                  discardAriaLabel={s.discardLabel(recordOf(change, s))}
                  onDiscard={() => discarding.ask(change)}
                />
              </td>
            </tr>
          ))}
        </ChangesTable>
      )}
      <ConfirmStep
        confirmation={discarding}
        title={() => s.discardTitle}
        text={(change) => s.discardRefusedText(recordOf(change, s))}
        confirmLabel={s.discard}
        cancelLabel={s.cancel}
      />
    </section>
  );
}
