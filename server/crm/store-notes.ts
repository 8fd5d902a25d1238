import { and, desc, eq, inArray, ne } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { opportunityNotes } from './schema.js';

export type NoteRow = typeof opportunityNotes.$inferSelect;

/** The notes of one of the cabinet's opportunities, newest first, at most `limit`. */
export function notesOf(orm: Orm, cabinetId: string, opportunityId: string, limit: number): NoteRow[] {
  return orm
    .select()
    .from(opportunityNotes)
    .where(and(eq(opportunityNotes.cabinetId, cabinetId), eq(opportunityNotes.opportunityId, opportunityId)))
    .orderBy(desc(opportunityNotes.createdAt), desc(opportunityNotes.id))
    .limit(limit)
    .all();
}

/** The ids of the notes of some of the cabinet's opportunities whose body is not `body` already. */
export function noteIdsNotReading(orm: Orm, cabinetId: string, opportunityIds: readonly string[], body: string): string[] {
  return orm
    .select({ id: opportunityNotes.id })
    .from(opportunityNotes)
    .where(
      and(
        eq(opportunityNotes.cabinetId, cabinetId),
        inArray(opportunityNotes.opportunityId, [...new Set(opportunityIds)]),
        ne(opportunityNotes.body, body),
      ),
    )
    .all()
    .map((row) => row.id);
}
