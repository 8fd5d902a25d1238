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
import { MAX_DEVIS_DOCUMENTS } from '../../shared/devis-documents.js';
import type { Orm } from '../platform/db/open.js';
import { storedDocumentSchema, storedOffresSchema, type StoredDocument } from './documents.js';
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
  // Optional: an install of a version without them creates quotes without them.
  offres: storedJson(storedOffresSchema, 'a list of offers').nullable().optional(),
  documents: storedJson(z.array(storedDocumentSchema).max(MAX_DEVIS_DOCUMENTS), 'a list of documents').nullable().optional(),
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

/** The other documents a change names (its documents field, when it carries one that parses). */
function documentsIn(fields: Record<string, unknown>): StoredDocument[] | undefined {
  if (typeof fields.documents !== 'string') return fields.documents === null ? [] : undefined;
  let json: unknown;
  try {
    json = JSON.parse(fields.documents);
  } catch {
    return undefined;
  }
  const parsed = z.array(storedDocumentSchema).max(MAX_DEVIS_DOCUMENTS).safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

const fileBySha = (orm: Orm, cabinetId: string, sha256: string) =>
  store.readDocumentBySha(orm, cabinetId, sha256) ?? store.readAttachmentBySha(orm, cabinetId, sha256);

/**
 * Quotes sync with their PDF and other documents, addressed by SHA-256: pushed to the hub before
 * the change that names them, fetched before a pulled change that names them is applied, stored
 * once per quote. A document whose file has not arrived is left out here, as a PDF is.
 */
export const devisRecords = {
  ...devisTable,
  blobsOf: (fields) => [...(pdfOf(fields) ? [pdfOf(fields)!] : []), ...(documentsIn(fields) ?? []).map((doc) => doc.sha256)],
  readBlob: fileBySha,
  hasBlob: (orm, cabinetId, sha256) => fileBySha(orm, cabinetId, sha256) !== undefined,
  write(orm, cabinetId, recordId, fields, context) {
    if (!devisTable.write(orm, cabinetId, recordId, fields, context)) return false;
    const sha = pdfOf(fields);
    const pdf = sha === undefined ? undefined : (context.blob(sha) ?? store.readDocumentBySha(orm, cabinetId, sha));
    if (sha !== undefined && pdf !== undefined)
      store.upsertDocument(orm, { devisId: recordId, cabinetId, pdf, sha256: sha, createdAt: context.now });
    const documents = documentsIn(fields);
    if (documents !== undefined) {
      const files = documents.flatMap((doc, index) => {
        const bytes = context.blob(doc.sha256) ?? fileBySha(orm, cabinetId, doc.sha256);
        return bytes ? [{ position: index + 1, pdf: bytes, sha256: doc.sha256 }] : [];
      });
      store.replaceAttachments(orm, cabinetId, recordId, files, context.now);
    }
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
