import { ERASED_RECORD_FIELDS } from '../../shared/erasure.js';
import { OPPORTUNITY_NOTES_MAX, type OpportunityNote } from '../../shared/opportunity-notes.js';
import type { Deps } from '../deps.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import { toIso } from '../platform/iso-time.js';
import { notFound, opportunityExists } from './service.js';
import { opportunityNoteRecords } from './sync.js';
import { noteIdsNotReading, notesOf, type NoteRow } from './store-notes.js';

function toNote(row: NoteRow): OpportunityNote {
  return { note_id: row.id, opportunity_id: row.opportunityId, author: row.author, body: row.body, created_at: toIso(row.createdAt) };
}

/** Adds a note to one of the cabinet's opportunities; another cabinet's is not found. */
export function addNote(deps: Deps, cabinetId: string, opportunityId: string, note: { author: string; body: string }): OpportunityNote {
  return deps.db.immediateTransaction(() => {
    if (!opportunityExists(deps, cabinetId, opportunityId)) throw notFound('opportunity', opportunityId);
    const now = deps.clock.now();
    const row: NoteRow = { id: timeOrderedUuid(now, deps.randomBytes), cabinetId, opportunityId, ...note, createdAt: now };
    opportunityNoteRecords.insert(deps, row);
    return toNote(row);
  });
}

/** The notes of one of the cabinet's opportunities, newest first. */
export function listNotes(deps: Deps, cabinetId: string, opportunityId: string): { data: OpportunityNote[] } {
  if (!opportunityExists(deps, cabinetId, opportunityId)) throw notFound('opportunity', opportunityId);
  return { data: notesOf(deps.db.orm, cabinetId, opportunityId, OPPORTUNITY_NOTES_MAX).map(toNote) };
}

/**
 * A client's erasure reaches the notes of its opportunities (a broker writes what the client said):
 * their body is emptied, queued for the other installs as an edit. Inside the erasure's
 * transaction. Returns the ids of the notes emptied.
 */
export function eraseNotesOf(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>,
  cabinetId: string,
  opportunityIds: readonly string[],
): string[] {
  if (opportunityIds.length === 0) return [];
  const erased = ERASED_RECORD_FIELDS.opportunity_note.body;
  const ids = noteIdsNotReading(deps.db.orm, cabinetId, opportunityIds, erased);
  for (const id of ids) opportunityNoteRecords.update(deps, cabinetId, id, { body: erased });
  return ids;
}
