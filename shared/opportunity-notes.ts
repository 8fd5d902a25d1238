import { z } from 'zod';
import { IDEMPOTENCY_HEADER } from './crm-endpoints.js';
import { consoleTwin, defineEndpoint } from './endpoint.js';
import { idParam } from './pagination.js';

/**
 * The notes a broker keeps on an opportunity (a call, what the prospect said): written once, never
 * edited, newest first. The REST API names who wrote one (author, "API" when not given); the
 * console writes the signed-in person's email.
 */

/** The most notes an opportunity's list answers: a longer history is the sign of a record to split. */
export const OPPORTUNITY_NOTES_MAX = 200;

export const opportunityNoteSchema = z
  .object({
    note_id: z.uuid(),
    opportunity_id: z.uuid(),
    author: z.string().describe('Who wrote it: a console user’s email, or the author an integration gave.'),
    body: z.string().describe('The note; empty once the opportunity’s client was erased.'),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'OpportunityNote' });
export type OpportunityNote = z.infer<typeof opportunityNoteSchema>;

const noteBody = z.string().trim().min(1).max(5000).describe('The note, 1 to 5000 characters.');

const addOpportunityNoteBody = z
  .strictObject({
    body: noteBody,
    author: z.string().trim().min(1).max(200).optional().describe('Who wrote it (a name or an email); "API" when not given.'),
  })
  .meta({ id: 'AddOpportunityNote' });

const notesPage = z.object({ data: z.array(opportunityNoteSchema) });
const params = idParam('opportunity_id');

export const listOpportunityNotes = defineEndpoint({
  method: 'GET',
  path: '/opportunities/{opportunity_id}/notes',
  operationId: 'listOpportunityNotes',
  summary: 'The notes of an opportunity, newest first',
  description: `At most ${OPPORTUNITY_NOTES_MAX}.`,
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:read',
  params,
  responses: { 200: { description: 'The notes.', schema: notesPage } },
  errors: ['not_found'],
});

export const addOpportunityNote = defineEndpoint({
  method: 'POST',
  path: '/opportunities/{opportunity_id}/notes',
  operationId: 'addOpportunityNote',
  summary: 'Add a note to an opportunity',
  description: 'A note is never edited: add another one to correct it.',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:write',
  headers: IDEMPOTENCY_HEADER,
  params,
  body: addOpportunityNoteBody,
  responses: {
    201: { description: 'The note.', schema: opportunityNoteSchema },
    200: { description: 'Replay of an earlier request with the same Idempotency-Key.', schema: opportunityNoteSchema },
  },
  errors: ['not_found', 'idempotency_conflict', 'idempotency_key_reused'],
});

const twin = { tag: 'Console: records', auth: 'console' } as const;

export const listConsoleOpportunityNotes = defineEndpoint(
  consoleTwin(listOpportunityNotes, { ...twin, operationId: 'consoleListOpportunityNotes' }),
);

// The console writes in the name of the signed-in person: its body has no author.
export const addConsoleOpportunityNote = defineEndpoint({
  ...consoleTwin(addOpportunityNote, { ...twin, operationId: 'consoleAddOpportunityNote' }),
  description: 'Written in the name of the signed-in person (their email). A note is never edited: add another one to correct it.',
  body: z.strictObject({ body: noteBody }).meta({ id: 'ConsoleAddOpportunityNote' }),
  responses: { 201: addOpportunityNote.responses[201] },
});

export const CONSOLE_NOTE_ENDPOINTS = [listConsoleOpportunityNotes, addConsoleOpportunityNote] as const;
