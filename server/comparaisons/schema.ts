import { sqliteTable, text, integer, index, primaryKey, blob } from 'drizzle-orm/sqlite-core';
import { API_KEY_ENVIRONMENTS } from '../../shared/api-keys.js';
import { RISK_LINE_CODES } from '../../shared/comparaisons.js';
import { cabinets } from '../tenancy/schema.js';

/**
 * A comparison: one risk priced at several insurers at once. Its jobs are the automation module's
 * (read through its service); this row keeps what ties them together and the insurers left out.
 */
export const comparaisons = sqliteTable(
  'comparaisons',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    ligne: text('ligne', { enum: RISK_LINE_CODES }).notNull(),
    clientId: text('client_id'),
    /** The risk as validated, JSON. */
    risque: text('risque').notNull(),
    /** JSON [{compagnie, produit, job_id, devis_id}], in the order the insurers were asked. */
    jobs: text('jobs').notNull(),
    /** JSON [{compagnie, raison, message}]: the insurers left out. */
    ecartees: text('ecartees').notNull(),
    environment: text('environment', { enum: API_KEY_ENVIRONMENTS }).notNull(),
    createdAt: integer('created_at').notNull(),
    /** When its last job ended and comparaison.completed was recorded; null until then. */
    completedAt: integer('completed_at'),
    /**
     * Started on this install, whose robots run its jobs: only here is its end recorded (a
     * comparison pulled from another install of the cabinet ends there, and its event comes with it).
     */
    madeHere: integer('made_here', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [
    index('comparaisons_cabinet_created').on(t.cabinetId, t.createdAt, t.id),
    index('comparaisons_cabinet_client').on(t.cabinetId, t.clientId, t.createdAt),
  ],
);

/** Which comparison a job belongs to: a job's end looks its comparison up here. */
export const comparaisonJobs = sqliteTable(
  'comparaison_jobs',
  {
    jobId: text('job_id').notNull(),
    comparaisonId: text('comparaison_id')
      .notNull()
      .references(() => comparaisons.id),
    cabinetId: text('cabinet_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId] }), index('comparaison_jobs_comparaison').on(t.comparaisonId)],
);

/**
 * An advice document (the duty to advise): what a broker recommended from a comparison, and why,
 * as the PDF handed to the client. Kept whole: its text is evidence of the advice given.
 */
export const conseils = sqliteTable(
  'conseils',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    comparaisonId: text('comparaison_id')
      .notNull()
      .references(() => comparaisons.id),
    clientId: text('client_id').notNull(),
    compagnie: text('compagnie').notNull(),
    formule: text('formule').notNull(),
    motif: text('motif').notNull(),
    besoins: text('besoins').notNull(),
    /** Null on an install that pulled the document before its PDF arrived (the hub sends it with the record). */
    pdf: blob('pdf', { mode: 'buffer' }),
    pdfSha256: text('pdf_sha256').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('conseils_cabinet_client').on(t.cabinetId, t.clientId, t.createdAt)],
);
