import { EVENT_TYPES, type EventType } from '../../../../shared/events.js';
import type { WebhookStrings } from './strings.js';

/** What a subscription may pick: the catalogue, test deliveries aside (they go to one webhook on demand). */
const PICKABLE_EVENTS: readonly EventType[] = EVENT_TYPES.filter((e) => e !== 'webhook.test');

/** The events of a subscription: "All events" (["*"]) or checkboxes from the catalogue, each with its description. */
interface EventPickerProps {
  s: WebhookStrings;
  idPrefix: string;
  value: readonly string[];
  onChange: (events: string[]) => void;
  /** What is wrong with the choice, shown under the legend and read with the group. */
  problem: { id: string; text: string } | null;
}

export function EventPicker({ s, idPrefix, value, onChange, problem }: EventPickerProps) {
  const all = value.includes('*');
  function toggle(type: EventType, checked: boolean) {
    const next = new Set(value.filter((e) => e !== '*'));
    if (checked) next.add(type);
    else next.delete(type);
    // Catalogue order; a type set through the API but not offered here (webhook.test) is kept.
    const others = value.filter((e) => e !== '*' && !(PICKABLE_EVENTS as readonly string[]).includes(e));
    onChange([...PICKABLE_EVENTS.filter((e) => next.has(e)), ...others]);
  }
  return (
    <fieldset className="wh-events" aria-invalid={problem !== null || undefined} aria-describedby={problem?.id}>
      <legend>{s.events}</legend>
      {problem !== null && (
        <p id={problem.id} className="wh-field-error">
          {problem.text}
        </p>
      )}
      <div className="wh-check wh-check-all">
        <input
          id={`${idPrefix}-all`}
          data-field="events"
          type="checkbox"
          checked={all}
          onChange={(e) => onChange(e.target.checked ? ['*'] : [])}
          aria-describedby={`${idPrefix}-all-hint`}
        />
        <label htmlFor={`${idPrefix}-all`}>{s.allEvents}</label>
        <span id={`${idPrefix}-all-hint`} className="muted small">
          {s.allEventsHint}
        </span>
      </div>
      <ul className="wh-event-list">
        {PICKABLE_EVENTS.map((type) => {
          const id = `${idPrefix}-${type.replace('.', '-')}`;
          return (
            <li key={type} className="wh-check">
              <input
                id={id}
                type="checkbox"
                checked={all || value.includes(type)}
                disabled={all}
                onChange={(e) => toggle(type, e.target.checked)}
                aria-describedby={`${id}-hint`}
              />
              <label htmlFor={id} className="wh-code">
                {type}
              </label>
              <span id={`${id}-hint`} className="muted small">
                {s.eventDescriptions[type]}
              </span>
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}
