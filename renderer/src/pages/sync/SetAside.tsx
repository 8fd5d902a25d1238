import { useRef, useState } from 'react';
import { discardSyncConflict, listSyncConflicts, retrySyncConflict, type SyncConflict } from '../../../../shared/console-sync.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import type { Lang } from '../../i18n.js';
import { Alert } from '../../Layout.js';
import { ChangesTable, FeedbackLine, RowActions, type Said } from './ChangesTable.js';
import { absoluteTime, kindName, recordOf, retryOutcome } from './format.js';
import type { SyncStrings } from './strings.js';
import { useCountedList } from './useCountedList.js';
import { refreshSyncStatus } from './useSyncStatus.js';

/** What an action on one set-aside change came to. */
interface Feedback extends Said {
  seq: number;
}

/** The set-aside changes, read again when their count moves (useCountedList). */
const readSetAside = () => call(listSyncConflicts);

interface RowProps {
  conflict: SyncConflict;
  s: SyncStrings;
  lang: Lang;
  /** What the last action on this change came to, shown under its row. */
  feedback: Feedback | null;
  retrying: boolean;
  working: boolean;
  onRetry: () => void;
  onDiscard: () => void;
}

const COLUMNS = 5;

function ConflictRow({ conflict, s, lang, feedback, retrying, working, onRetry, onDiscard }: RowProps) {
  const record = recordOf(conflict, s);
  return (
    <>
      <tr>
        <td>{absoluteTime(conflict.set_aside_at, lang)}</td>
        <td>
          {kindName(conflict.kind, s)} <span className="muted small sync-mono">{conflict.record_id}</span>
        </td>
        <td>
          {s.setAsideReasons[conflict.reason]} <span className="muted small">({conflict.message})</span>
        </td>
        <td className="sync-mono small">{conflict.device_id}</td>
        <td>
          <RowActions
            working={working}
            busy={retrying}
            label={retrying ? s.retrying : s.retry}
            ariaLabel={s.retryLabel(record)}
            onAct={onRetry}
            discardLabel={s.discard}
            discardAriaLabel={s.discardLabel(record)}
            onDiscard={onDiscard}
          />
        </td>
      </tr>
      {feedback !== null && (
        <tr className="sync-feedback-row">
          <td colSpan={COLUMNS}>
            <FeedbackLine feedback={feedback} />
          </td>
        </tr>
      )}
    </>
  );
}

/**
 * The changes this install set aside (administrators: their fields may hold personal data), each
 * with Try again and Discard (asked first). After either, the list and the count are read again,
 * and what became of the change is said under its row, or above the list once it left it.
 */
export function SetAside({ s, lang, count }: { s: SyncStrings; lang: Lang; count: number }) {
  const { list: conflicts, error, reload } = useCountedList(count, readSetAside);
  const [feedback, setFeedback] = useState<Feedback | null>(null);
  const [retrying, setRetrying] = useState<number | null>(null);
  const said = useRef(0);
  const say = (seq: number, tone: Feedback['tone'], text: string) => setFeedback({ id: ++said.current, seq, tone, text });
  /** The list and the count after an action, read together; the list for the outcome's words. */
  const readAgain = async () => (await Promise.all([reload(), refreshSyncStatus()]))[0];

  const discarding = useConfirmation(
    (conflict: SyncConflict) => call(discardSyncConflict, { params: { seq: conflict.seq } }),
    async (conflict, result) => {
      await readAgain();
      if (result.ok) say(conflict.seq, 'notice', s.outcomes.discarded(recordOf(conflict, s)));
      else say(conflict.seq, 'error', result.error.message);
    },
  );
  const working = retrying !== null || discarding.busy;

  async function retry(conflict: SyncConflict) {
    if (working) return;
    setRetrying(conflict.seq);
    setFeedback(null);
    const result = await call(retrySyncConflict, { params: { seq: conflict.seq } });
    const after = await readAgain();
    setRetrying(null);
    if (result.ok) say(conflict.seq, 'notice', retryOutcome(result.data, conflict, after, s));
    else say(conflict.seq, 'error', result.error.message);
  }

  // Once none is left, the section stays only to say what became of the last one.
  if (count === 0 && feedback === null) return null;
  const listed = (seq: number) => conflicts?.some((conflict) => conflict.seq === seq) ?? false;
  return (
    <section className="sync-set-aside">
      <h3>{s.setAsideTitle}</h3>
      <p className="muted">{s.setAsideIntro}</p>
      {error !== null && <Alert>{error}</Alert>}
      {feedback !== null && !listed(feedback.seq) && <FeedbackLine feedback={feedback} />}
      {conflicts !== null && conflicts.length === 0 && <p className="muted">{s.setAsideNone}</p>}
      {conflicts !== null && conflicts.length > 0 && (
        <ChangesTable
          title={s.setAsideTitle}
          testId="sync-set-aside-list"
          columns={[
            s.setAsideColumns.when,
            s.setAsideColumns.what,
            s.setAsideColumns.why,
            s.setAsideColumns.from,
            s.setAsideColumns.actions,
          ]}
        >
          {conflicts.map((conflict) => (
            <ConflictRow
              key={conflict.seq}
              conflict={conflict}
              s={s}
              lang={lang}
              feedback={feedback?.seq === conflict.seq ? feedback : null}
              retrying={retrying === conflict.seq}
              working={working}
              onRetry={() => void retry(conflict)}
              onDiscard={() => discarding.ask(conflict)}
            />
          ))}
        </ChangesTable>
      )}
      <ConfirmStep
        confirmation={discarding}
        title={() => s.discardTitle}
        text={(conflict) => s.discardText(recordOf(conflict, s))}
        confirmLabel={s.discard}
        cancelLabel={s.cancel}
      />
    </section>
  );
}
