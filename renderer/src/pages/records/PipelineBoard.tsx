import { useEffect, useId, useRef, useState, type KeyboardEvent, type PointerEvent as ReactPointerEvent } from 'react';
import type { ConsoleOpportunity as Opportunity } from '../../../../shared/console-records.js';
import { OPPORTUNITY_STAGES, type OpportunityStage } from '../../../../shared/crm.js';
import type { Lang } from '../../i18n.js';
import { opportunityPath } from './common.js';
import type { PipelineStrings } from './pipeline-strings.js';
import { formatEuros, type RecordsStrings } from './strings.js';

type Column = { opportunities: Opportunity[]; nextCursor: string | null };
export type Board = Record<OpportunityStage, Column>;

/** The pointer travels this far (px) before a press on a card becomes a drag: a click stays a click. */
const DRAG_THRESHOLD = 5;

/** A card being moved: by the pointer (with its offset) or by the keyboard, and the column it is over. */
type Moving = { id: string; from: OpportunityStage; over: OpportunityStage; by: 'pointer' | 'keyboard'; dx: number; dy: number };

/** Who an opportunity is for, as a card says it: its client, else its contact. */
export function whoOf(opportunity: Opportunity): string {
  if (opportunity.client_name) return opportunity.client_name;
  const contact = opportunity.contact;
  return contact.company_name ?? [contact.first_name, contact.last_name].filter((part) => part).join(' ');
}

interface BoardProps {
  lang: Lang;
  s: RecordsStrings;
  p: PipelineStrings;
  board: Board;
  /** The card whose Move button takes the focus after a move or a dialog (its card may have moved to another column). */
  focusRequest: { id: string } | null;
  onMove: (opportunity: Opportunity, to: OpportunityStage) => void;
  onLoadMore: (stage: OpportunityStage) => void;
}

/**
 * The opportunities by stage, one column each. A card moves to another column by dragging it (a
 * mouse anywhere on the card, a finger on its Move button), by the keyboard on its Move button
 * (Space or Enter picks it up, the arrows choose the column, Space or Enter drops, Escape cancels,
 * each step read out), or with its stage select. The page decides what a drop does (onMove).
 */
export function PipelineBoard({ lang, s, p, board, focusRequest, onMove, onLoadMore }: BoardProps) {
  const helpId = useId();
  const [moving, setMoving] = useState<Moving | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const columns = useRef(new Map<OpportunityStage, HTMLElement>());
  const handles = useRef(new Map<string, HTMLButtonElement>());

  useEffect(() => {
    if (focusRequest !== null) handles.current.get(focusRequest.id)?.focus();
  }, [focusRequest]);

  /** The column under a point of the viewport, if any. */
  function stageAt(x: number, y: number): OpportunityStage | null {
    for (const [stage, element] of columns.current) {
      const r = element.getBoundingClientRect();
      if (x >= r.left && x <= r.right && y >= r.top && y <= r.bottom) return stage;
    }
    return null;
  }

  function startPointerDrag(event: ReactPointerEvent<HTMLElement>, opportunity: Opportunity) {
    const onHandle = event.target instanceof Element && event.target.closest('.pipeline-handle') !== null;
    const onControl = event.target instanceof Element && event.target.closest('a, select, button, input') !== null;
    // A finger drags by the Move button only, so that swiping over cards still scrolls the board.
    if (event.button !== 0 || (onControl && !onHandle) || (event.pointerType !== 'mouse' && !onHandle)) return;
    event.preventDefault();
    const start = { x: event.clientX, y: event.clientY };
    let dragging = false;
    let lastOver: OpportunityStage = opportunity.stage;
    const move = (e: PointerEvent) => {
      const dx = e.clientX - start.x;
      const dy = e.clientY - start.y;
      if (!dragging && Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
      dragging = true;
      const over = stageAt(e.clientX, e.clientY) ?? opportunity.stage;
      setMoving({ id: opportunity.id, from: opportunity.stage, over, by: 'pointer', dx, dy });
      // A screen reader hears each column the card enters, as with the keyboard.
      if (over !== lastOver) setAnnouncement(p.over(opportunity.title, s.stages[over]));
      lastOver = over;
    };
    const end = (e: PointerEvent, dropped: boolean) => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      window.removeEventListener('pointercancel', cancel);
      setMoving(null);
      if (!dragging || !dropped) return;
      const to = stageAt(e.clientX, e.clientY);
      if (to !== null && to !== opportunity.stage) onMove(opportunity, to);
    };
    const up = (e: PointerEvent) => end(e, true);
    const cancel = (e: PointerEvent) => end(e, false);
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
    window.addEventListener('pointercancel', cancel);
  }

  function onHandleKey(event: KeyboardEvent<HTMLButtonElement>, opportunity: Opportunity) {
    const picked = moving?.by === 'keyboard' && moving.id === opportunity.id ? moving : null;
    const key = event.key;
    if (picked === null) {
      if (key !== ' ' && key !== 'Enter') return;
      event.preventDefault();
      setMoving({ id: opportunity.id, from: opportunity.stage, over: opportunity.stage, by: 'keyboard', dx: 0, dy: 0 });
      return setAnnouncement(p.pickedUp(opportunity.title, s.stages[opportunity.stage]));
    }
    if (key === 'ArrowRight' || key === 'ArrowLeft' || key === 'ArrowUp' || key === 'ArrowDown') {
      event.preventDefault();
      const step = key === 'ArrowRight' || key === 'ArrowDown' ? 1 : -1;
      const index = Math.min(OPPORTUNITY_STAGES.length - 1, Math.max(0, OPPORTUNITY_STAGES.indexOf(picked.over) + step));
      const over = OPPORTUNITY_STAGES[index] ?? picked.over;
      setMoving({ ...picked, over });
      columns.current.get(over)?.scrollIntoView?.({ block: 'nearest', inline: 'nearest' });
      return setAnnouncement(p.over(opportunity.title, s.stages[over]));
    }
    if (key === ' ' || key === 'Enter') {
      event.preventDefault();
      setMoving(null);
      if (picked.over === picked.from) return setAnnouncement(p.droppedSame(opportunity.title, s.stages[picked.from]));
      setAnnouncement('');
      return onMove(opportunity, picked.over);
    }
    if (key === 'Escape') {
      event.preventDefault();
      setMoving(null);
      setAnnouncement(p.cancelled(opportunity.title, s.stages[picked.from]));
    }
  }

  /** Leaving the Move button while a card is picked up puts it back. */
  function onHandleBlur(opportunity: Opportunity) {
    if (moving?.by !== 'keyboard' || moving.id !== opportunity.id) return;
    setMoving(null);
    setAnnouncement(p.cancelled(opportunity.title, s.stages[opportunity.stage]));
  }

  return (
    <>
      <p id={helpId} className="muted small">
        {p.dragHelp}
      </p>
      <div className="pipeline-live visually-hidden" role="status" aria-live="assertive" aria-atomic="true">
        {announcement}
      </div>
      <div
        className={`records-board pipeline-board${moving ? ' pipeline-board-moving' : ''}`}
        role="region"
        aria-label={p.boardLabel}
        tabIndex={-1}
      >
        {OPPORTUNITY_STAGES.map((stage) => {
          const column = board[stage];
          const total = column.opportunities.reduce((sum, o) => sum + o.expected_value_eur, 0);
          const over = moving !== null && moving.over === stage && moving.from !== stage;
          return (
            <section
              key={stage}
              ref={(element) => void (element ? columns.current.set(stage, element) : columns.current.delete(stage))}
              className={`records-column records-column-${stage}${over ? ' pipeline-column-over' : ''}`}
              aria-labelledby={`stage-${stage}`}
              data-stage={stage}
            >
              <h2 id={`stage-${stage}`}>
                {s.stages[stage]}{' '}
                <span className="muted small pipeline-column-summary">
                  {p.columnSummary(column.opportunities.length, column.nextCursor !== null, formatEuros(lang, total))}
                </span>
              </h2>
              {column.opportunities.length === 0 && <p className="muted small">{s.noOpportunities}</p>}
              <ul className="records-cards" aria-label={s.stages[stage]}>
                {column.opportunities.map((opportunity) => {
                  const mine = moving?.id === opportunity.id ? moving : null;
                  return (
                    <li
                      key={opportunity.id}
                      className={`records-card pipeline-card${mine ? ' pipeline-card-moving' : ''}`}
                      aria-label={opportunity.title}
                      style={mine?.by === 'pointer' ? { transform: `translate(${mine.dx}px, ${mine.dy}px)` } : undefined}
                      onPointerDown={(e) => startPointerDrag(e, opportunity)}
                    >
                      <div className="records-card-head">
                        <a className="records-card-title" href={opportunityPath(opportunity.id)}>
                          {opportunity.title}
                        </a>
                        <button
                          type="button"
                          className="button pipeline-handle"
                          ref={(element) =>
                            void (element ? handles.current.set(opportunity.id, element) : handles.current.delete(opportunity.id))
                          }
                          aria-label={p.moveHandle(opportunity.title)}
                          aria-describedby={helpId}
                          aria-pressed={mine?.by === 'keyboard' ? true : undefined}
                          onKeyDown={(e) => onHandleKey(e, opportunity)}
                          onBlur={() => onHandleBlur(opportunity)}
                        >
                          <span aria-hidden="true">⠿</span>
                        </button>
                      </div>
                      <p className="records-card-line muted small">{`${whoOf(opportunity) || p.noClient} · ${opportunity.product}`}</p>
                      <p className="records-card-line small">
                        <strong>{formatEuros(lang, opportunity.expected_value_eur)}</strong>
                      </p>
                      <StageSelect s={s} opportunity={opportunity} onChoose={(to) => to !== opportunity.stage && onMove(opportunity, to)} />
                    </li>
                  );
                })}
              </ul>
              {column.nextCursor && (
                <button type="button" className="button records-small-button" onClick={() => onLoadMore(stage)}>
                  {s.loadMore}
                </button>
              )}
            </section>
          );
        })}
      </div>
    </>
  );
}

/** The stage as a select: the way to move a card without dragging it (a phone's narrow board). */
function StageSelect({
  s,
  opportunity,
  onChoose,
}: {
  s: RecordsStrings;
  opportunity: Opportunity;
  onChoose: (to: OpportunityStage) => void;
}) {
  const selectId = useId();
  return (
    <div className="field records-stage-field">
      <label htmlFor={selectId} className="small">
        {s.stage}
      </label>
      <select
        id={selectId}
        aria-label={s.stageOf(opportunity.title)}
        value={opportunity.stage}
        onChange={(e) => onChoose(e.target.value as OpportunityStage)}
      >
        {OPPORTUNITY_STAGES.map((stage) => (
          <option key={stage} value={stage}>
            {s.stages[stage]}
          </option>
        ))}
      </select>
    </div>
  );
}
