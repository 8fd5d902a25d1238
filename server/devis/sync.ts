import { syncedTable, type SyncedRecords } from '../sync/synced-table.js';
import { contracts, devis } from './schema.js';
import * as store from './store.js';

const devisTable = syncedTable('devis', devis);

function pdfOf(fields: Record<string, unknown>): string | undefined {
  const sha = fields.pdf_sha256;
  return typeof sha === 'string' ? sha : undefined;
}

/**
 * Quotes sync with their PDF, addressed by its SHA-256: pushed to the hub before the change that
 * names it, fetched before a pulled change that names it is applied, stored once per quote.
 */
export const devisRecords = {
  ...devisTable,
  blobsOf: (fields) => {
    const sha = pdfOf(fields);
    return sha ? [sha] : [];
  },
  readBlob: (orm, cabinetId, sha256) => store.readDocumentBySha(orm, cabinetId, sha256),
  hasBlob: (orm, cabinetId, sha256) => store.readDocumentBySha(orm, cabinetId, sha256) !== undefined,
  write(orm, cabinetId, recordId, fields, context) {
    if (!devisTable.write(orm, cabinetId, recordId, fields, context)) return false;
    const sha = pdfOf(fields);
    const pdf = sha === undefined ? undefined : (context.blobs.get(sha) ?? store.readDocumentBySha(orm, cabinetId, sha));
    if (sha !== undefined && pdf !== undefined) store.upsertDocument(orm, { devisId: recordId, cabinetId, pdf, sha256: sha, createdAt: context.now });
    return true;
  },
} satisfies SyncedRecords & Pick<typeof devisTable, 'capture'>;

export const contractRecords = syncedTable('contract', contracts);
