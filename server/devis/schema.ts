import { sqliteTable, text, integer, index, blob, primaryKey } from 'drizzle-orm/sqlite-core';
import { DEVIS_STATUSES } from '../../shared/devis.js';
import { cabinets } from '../tenancy/schema.js';

export const devis = sqliteTable(
  'devis',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    status: text('status', { enum: DEVIS_STATUSES }).notNull(),
    /** Checked through the CRM service at creation; null for a quote a tarification created alone. */
    clientId: text('client_id'),
    opportunityId: text('opportunity_id'),
    compagnie: text('compagnie').notNull(),
    produit: text('produit').notNull(),
    dicData: text('dic_data').notNull(),
    tarifCents: integer('tarif_cents'),
    suspens: text('suspens'),
    jobId: text('job_id'),
    /** SHA-256 of the stored PDF; null while the quote has none. */
    pdfSha256: text('pdf_sha256'),
    /** Every formula the insurer offered (JSON, shared/devis-documents.ts's Offre[]); null when it showed one. */
    offres: text('offres'),
    /** The quote's other documents (JSON: [{kind, label, sha256}]), their files in devis_attachments; null for none. */
    documents: text('documents'),
    contractId: text('contract_id'),
    signedAt: integer('signed_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('devis_page_idx').on(t.cabinetId, t.createdAt, t.id),
    index('devis_status_page_idx').on(t.cabinetId, t.status, t.createdAt, t.id),
    index('devis_client_idx').on(t.cabinetId, t.clientId),
  ],
);

/** Quote PDFs, in SQLite so that a quote and its PDF commit together. */
export const devisDocuments = sqliteTable(
  'devis_documents',
  {
    devisId: text('devis_id')
      .primaryKey()
      .references(() => devis.id),
    cabinetId: text('cabinet_id').notNull(),
    pdf: blob('pdf', { mode: 'buffer' }).notNull(),
    sha256: text('sha256').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  // The sync addresses PDFs by content hash.
  (t) => [index('devis_documents_sha_idx').on(t.cabinetId, t.sha256)],
);

/** The files of a quote's other documents (conditions, information document), by position from 1. */
export const devisAttachments = sqliteTable(
  'devis_attachments',
  {
    devisId: text('devis_id')
      .notNull()
      .references(() => devis.id),
    position: integer('position').notNull(),
    cabinetId: text('cabinet_id').notNull(),
    pdf: blob('pdf', { mode: 'buffer' }).notNull(),
    sha256: text('sha256').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  // The sync addresses files by content hash, as it does quote PDFs.
  (t) => [primaryKey({ columns: [t.devisId, t.position] }), index('devis_attachments_sha_idx').on(t.cabinetId, t.sha256)],
);

/** A signed quote becomes a contract. */
export const contracts = sqliteTable('contracts', {
  id: text('id').primaryKey(),
  cabinetId: text('cabinet_id')
    .notNull()
    .references(() => cabinets.id),
  devisId: text('devis_id')
    .notNull()
    .unique()
    .references(() => devis.id),
  clientId: text('client_id').notNull(),
  opportunityId: text('opportunity_id'),
  compagnie: text('compagnie').notNull(),
  produit: text('produit').notNull(),
  premiumCents: integer('premium_cents').notNull(),
  signedAt: integer('signed_at').notNull(),
  createdAt: integer('created_at').notNull(),
});
