import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { CLIENT_TYPES, CREATED_VIA, OPPORTUNITY_STAGES } from '../../shared/crm.js';
import { cabinets } from '../tenancy/schema.js';

export const opportunities = sqliteTable(
  'opportunities',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    title: text('title').notNull(),
    product: text('product').notNull(),
    stage: text('stage', { enum: OPPORTUNITY_STAGES }).notNull(),
    expectedValueCents: integer('expected_value_cents').notNull(),
    source: text('source').notNull(),
    /** JSON: {last_name, first_name, company_name, siret, email, phone}. */
    contact: text('contact').notNull(),
    /** JSON array of strings. */
    tags: text('tags').notNull(),
    /** The cabinet's client it is for, if one was chosen; kept once that client is erased (a tombstone, as a quote's). */
    clientId: text('client_id'),
    createdVia: text('created_via', { enum: CREATED_VIA }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('opportunities_page_idx').on(t.cabinetId, t.createdAt, t.id),
    index('opportunities_stage_page_idx').on(t.cabinetId, t.stage, t.createdAt, t.id),
    index('opportunities_client_idx').on(t.cabinetId, t.clientId),
  ],
);

/** A broker's notes on an opportunity: written once; only a client's erasure empties their body. */
export const opportunityNotes = sqliteTable(
  'opportunity_notes',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    opportunityId: text('opportunity_id').notNull(),
    author: text('author').notNull(),
    body: text('body').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('opportunity_notes_opportunity_idx').on(t.cabinetId, t.opportunityId, t.createdAt)],
);

export const clients = sqliteTable(
  'clients',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    type: text('type', { enum: CLIENT_TYPES }).notNull(),
    lastName: text('last_name'),
    firstName: text('first_name'),
    companyName: text('company_name'),
    siret: text('siret'),
    email: text('email'),
    phone: text('phone'),
    /** JSON: {line1, line2, postcode, city, country}, or null. */
    address: text('address'),
    birthDate: text('birth_date'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /** Set by the erasure, which nulls every personal field: the row stays as a tombstone that quotes and contracts still reference. */
    erasedAt: integer('erased_at'),
  },
  (t) => [
    index('clients_page_idx').on(t.cabinetId, t.createdAt, t.id),
    index('clients_type_page_idx').on(t.cabinetId, t.type, t.createdAt, t.id),
  ],
);
