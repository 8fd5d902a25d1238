import { useCallback, useEffect, useRef, useState } from 'react';
import { discardSyncRefused, listSyncRefused, resendSyncRefused, type SyncRefusedChange } from '../../../../shared/console-sync.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import type { Lang } from '../../i18n.js';
import { Alert } from '../../Layout.js';
import { absoluteTime, kindName, recordOf } from './format.js';
import { FeedbackLine, type Said } from './SetAside.js';
import type { SyncStrings } from './strings.js';
import { refreshSyncStatus } from './useSyncStatus.js';

/** The refused changes, read again when their count moves and after an action. */
function useRefusedList(count: number) {
  const [refused, setRefused] = useState<SyncRefusedChange[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The number of the last read begun: an older answer arriving late must not replace a newer one. */
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++latest.current;
    const result = await call(listSyncRefused);
    if (mine !== latest.current) return;
    setError(result.ok ? null : result.error.message);
    if (result.ok) setRefused(result.data.data);
  }, []);
  useEffect(() => {
    if (count === 0) setRefused([]);
    else void reload();
    return () => {
      latest.current += 1;
    };
  }, [count, reload]);
  return { refused, error, reload };
}

/**
 * The changes made here that the hub refused (administrators: their fields may hold personal data),
 * each with Send again (once the hub is updated, or what it refused changed) and Discard (asked
 * first). Either takes the change off the list; what became of it is said above the list.
 */
export function RefusedByHub({ s, lang, count }: { s: SyncStrings; lang: Lang; count: number }) {
  const { refused, error, reload } = useRefusedList(count);
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
        // The frame scrolls sideways on a narrow screen; focusable so that a keyboard can scroll it.
        <div className="admin-table-frame" role="region" aria-label={s.refusedTitle} tabIndex={0}>
          <table className="admin-table" data-testid="sync-refused-list">
            <thead>
              <tr>
                <th scope="col">{s.refusedColumns.when}</th>
                <th scope="col">{s.refusedColumns.what}</th>
                <th scope="col">{s.refusedColumns.why}</th>
                <th scope="col">{s.refusedColumns.actions}</th>
              </tr>
            </thead>
            <tbody>
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
                    <div className="sync-row-actions">
                      <button
                        type="button"
                        className="button button-small"
                        disabled={working}
                        aria-busy={sending === change.hlc}
                        aria-label={s.sendAgainLabel(recordOf(change, s))}
                        onClick={() => void sendAgain(change)}
                      >
                        {s.sendAgain}
                      </button>
                      <button
                        type="button"
                        className="button button-small button-danger-quiet"
                        disabled={working}
                        aria-label={s.discardLabel(recordOf(change, s))}
                        onClick={() => discarding.ask(change)}
                      >
                        {s.discard}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
