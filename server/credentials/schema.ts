import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core';
import { cabinets } from '../tenancy/schema.js';

/** Which insurers a cabinet has portal credentials for; the password itself is in the SecretStore. */
export const insurerCredentials = sqliteTable(
  'insurer_credentials',
  {
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    compagnie: text('compagnie').notNull(),
    login: text('login').notNull(),
    /** JSON object of further portal fields (an agency code…), never secrets. */
    extra: text('extra').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.compagnie] })],
);
