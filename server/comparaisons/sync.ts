import { z } from 'zod';
import { API_KEY_ENVIRONMENTS } from '../../shared/api-keys.js';
import { leftOutSchema, RISK_LINE_CODES } from '../../shared/comparaisons.js';
import { anyJsonObject, storedCode, storedId, storedJson, storedSha256, storedText, storedTime } from '../sync/stored-values.js';
import { syncedTable, type SyncedRecords } from '../sync/synced-table.js';
import { comparaisons, conseils } from './schema.js';
import * as store from './store.js';

/** The insurers a comparison asked, each with its job and quote. */
export const comparisonJobsSchema = z.array(
  z.object({ compagnie: storedCode, produit: storedCode, job_id: storedId, devis_id: storedId.optional() }),
);

const comparisonRow = z.object({
  ligne: z.enum(RISK_LINE_CODES),
  client_id: storedId.nullable(),
  // The risk as validated, or {} once its client was erased.
  risque: storedJson(anyJsonObject, 'a JSON object'),
  jobs: storedJson(comparisonJobsSchema, 'a list of jobs'),
  ecartees: storedJson(z.array(leftOutSchema), 'a list of insurers left out'),
  environment: z.enum(API_KEY_ENVIRONMENTS),
  created_at: storedTime,
  completed_at: storedTime.nullable(),
});

/**
 * Comparisons sync whole; their end (completed_at, and the comparaison.completed event) is recorded
 * by the install whose robots ran them (made_here stays on each install).
 */
export const comparisonRecords = syncedTable('comparaison', comparaisons, { local: ['madeHere'], fields: comparisonRow });

const conseilRow = z.object({
  comparaison_id: storedId,
  client_id: storedId,
  compagnie: storedCode,
  formule: storedText(60),
  motif: storedText(2000),
  besoins: storedText(4000),
  pdf_sha256: storedSha256,
  created_at: storedTime,
});

const conseilTable = syncedTable('conseil', conseils, {
  local: ['pdf'],
  fields: conseilRow,
  // The record of the advice given: what was handed to the client is never rewritten by another
  // install (an install restored from a backup gets its own creation back, which it may hold).
  accepts: (_orm, _cabinetId, change) =>
    change.held && !change.madeHere() ? { reason: 'operation_refused', message: 'an advice document is never edited once made' } : null,
});

/**
 * Advice documents sync with their PDF, addressed by SHA-256 as a quote's: pushed to the hub before
 * the document's record, fetched before it is applied; a PDF that has not arrived is left out.
 */
export const conseilRecords = {
  ...conseilTable,
  blobsOf: (fields) => (typeof fields.pdf_sha256 === 'string' ? [fields.pdf_sha256] : []),
  readBlob: (orm, cabinetId, sha256) => store.conseilPdfBySha(orm, cabinetId, sha256),
  hasBlob: (orm, cabinetId, sha256) => store.conseilPdfBySha(orm, cabinetId, sha256) !== undefined,
  write(orm, cabinetId, recordId, fields, context) {
    if (!conseilTable.write(orm, cabinetId, recordId, fields, context)) return false;
    const sha = typeof fields.pdf_sha256 === 'string' ? fields.pdf_sha256 : undefined;
    const pdf = sha === undefined ? undefined : context.blob(sha);
    if (pdf !== undefined) store.setConseilPdf(orm, cabinetId, recordId, pdf);
    return true;
  },
} satisfies SyncedRecords;
