import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { cabinets } from '../tenancy/schema.js';

/**
 * The outbox: every event is written in the same transaction as the change that caused it.
 * seq orders the table for readers (the webhook dispatcher, the sync); id is the envelope's UUID.
 */
export const events = sqliteTable(
  'events',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    type: text('type').notNull(),
    version: text('version').notNull(),
    createdAt: integer('created_at').notNull(),
    /** JSON of the envelope's data, unmasked; masking happens per delivery. */
    data: text('data').notNull(),
  },
  (t) => [index('events_cabinet_seq_idx').on(t.cabinetId, t.seq), index('events_created_idx').on(t.createdAt)],
);
