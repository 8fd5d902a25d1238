import { z } from 'zod';
import { DEVIS_STATUSES } from '../../shared/devis.js';
import {
  anyJsonObject,
  storedCode,
  MAX_PORTAL_TEXT,
  storedCount,
  storedId,
  storedJson,
  storedSha256,
  storedText,
  storedTime,
} from '../sync/stored-values.js';
import { syncedTable, type SyncedRecords } from '../sync/synced-table.js';
import { contracts, devis } from './schema.js';
import * as store from './store.js';

const devisRow = z.object({
  status: z.enum(DEVIS_STATUSES),
  client_id: storedId.nullable(),
  opportunity_id: storedId.nullable(),
  compagnie: storedCode,
  produit: storedCode,
  dic_data: storedJson(anyJsonObject, 'a JSON object'),
  tarif_cents: storedCount.nullable(),
  suspens: storedText(MAX_PORTAL_TEXT).nullable(),
  job_id: storedId.nullable(),
  pdf_sha256: storedSha256.nullable(),
  contract_id: storedId.nullable(),
  signed_at: storedTime.nullable(),
  created_at: storedTime,
  updated_at: storedTime,
});

const devisTable = syncedTable('devis', devis, { fields: devisRow });

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
  hasBlob: (orm, cabinetId, sha256) => store.hasDocumentBySha(orm, cabinetId, sha256),
  write(orm, cabinetId, recordId, fields, context) {
    if (!devisTable.write(orm, cabinetId, recordId, fields, context)) return false;
    const sha = pdfOf(fields);
    const pdf = sha === undefined ? undefined : (context.blob(sha) ?? store.readDocumentBySha(orm, cabinetId, sha));
    if (sha !== undefined && pdf !== undefined)
      store.upsertDocument(orm, { devisId: recordId, cabinetId, pdf, sha256: sha, createdAt: context.now });
    return true;
  },
} satisfies SyncedRecords & Pick<typeof devisTable, 'capture'>;

const contractRow = z.object({
  devis_id: storedId,
  client_id: storedId,
  opportunity_id: storedId.nullable(),
  compagnie: storedCode,
  produit: storedCode,
  premium_cents: storedCount,
  signed_at: storedTime,
  created_at: storedTime,
});

/**
 * A contract's id is its quote's (two installs that sign one quote offline make the same contract):
 * its creation travels as an edit, with its fields' clocks, so that the later signing wins on both.
 */
export const contractRecords = syncedTable('contract', contracts, { fields: contractRow, createdAs: 'update' });
