import { createHmac, timingSafeEqual } from 'node:crypto';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { PDF_LINK_TTL_SECONDS } from '../../shared/devis.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { documentsOf } from './documents.js';
import { notFound } from './service.js';
import * as store from './store.js';

/**
 * Download links to a quote's PDF and its other documents: what an integrator's browser or an
 * assistant opens without the API key. `position` names one of the other documents; none, the PDF.
 */

function linkPath(devisId: string, position?: number): string {
  return position === undefined
    ? `${PUBLIC_API_PREFIX}/files/devis/${devisId}.pdf`
    : `${PUBLIC_API_PREFIX}/files/devis/${devisId}/documents/${position}.pdf`;
}

function linkSignature(key: Buffer, path: string, cabinetId: string, expires: string): Buffer {
  return createHmac('sha256', key).update(`${path}\n${cabinetId}\n${expires}`).digest();
}

function signedLink(deps: Deps, cabinetId: string, path: string): string {
  const expires = String(Math.floor(deps.clock.now() / 1000) + PDF_LINK_TTL_SECONDS);
  const signature = linkSignature(deps.keys.downloadLink, path, cabinetId, expires).toString('hex');
  return `${path}?cabinet_id=${cabinetId}&expires=${expires}&signature=${signature}`;
}

const notReached = (id: string, what: string) =>
  new ApiError(
    'pdf_not_available',
    `The quote ${id} was priced on another install of the cabinet, and its ${what} did not reach this one.`,
  );

/** A download link valid 5 minutes: HMAC over the path, the cabinet and the expiry. */
export function createPdfLink(deps: Deps, cabinetId: string, id: string): string {
  const row = store.findDevis(deps.db.orm, cabinetId, id);
  if (!row) throw notFound(id);
  if (row.pdfSha256 === null) throw new ApiError('pdf_not_available', `The quote ${id} has no PDF: it is ${row.status}, not priced.`);
  // A quote priced on another install whose PDF never reached this one (sync): no link to a missing file.
  if (!store.hasDocument(deps.db.orm, cabinetId, id)) throw notReached(id, 'PDF');
  return signedLink(deps, cabinetId, linkPath(id));
}

/** A link to one of the quote's other documents, as createPdfLink's. */
export function createDocumentLink(deps: Deps, cabinetId: string, id: string, position: number): string {
  const row = store.findDevis(deps.db.orm, cabinetId, id);
  if (!row) throw notFound(id);
  const count = documentsOf(row).length;
  if (position > count) {
    throw new ApiError(
      'pdf_not_available',
      `The quote ${id} has ${count === 0 ? 'no other document' : `${count} other document${count > 1 ? 's' : ''}`}, no document ${position}.`,
    );
  }
  if (!store.readAttachment(deps.db.orm, cabinetId, id, position)) throw notReached(id, `document ${position}`);
  return signedLink(deps, cabinetId, linkPath(id, position));
}

/** The file behind a signed link; anything altered or expired is one 403 invalid_signature. */
export function readPdfFromLink(
  deps: Deps,
  link: { devisId: string; position?: string; cabinetId?: string; expires?: string; signature?: string },
): Buffer {
  const { devisId, cabinetId, expires, signature } = link;
  const refuse = (why: string) =>
    new ApiError(
      'invalid_signature',
      `This download link is not valid: ${why}. Ask GET ${PUBLIC_API_PREFIX}/devis/{devis_id}/${link.position === undefined ? 'pdf' : 'documents/{position}'} for a new one.`,
    );
  if (!cabinetId || !expires || !signature || !/^\d{1,15}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature))
    throw refuse('it is incomplete');
  if (link.position !== undefined && !/^[1-9]$/.test(link.position)) throw refuse('it was altered');
  const position = link.position === undefined ? undefined : Number(link.position);
  const expected = linkSignature(deps.keys.downloadLink, linkPath(devisId, position), cabinetId, expires);
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw refuse('it was altered');
  if (Number(expires) * 1000 <= deps.clock.now()) throw refuse('it has expired (links live 5 minutes)');
  const file =
    position === undefined
      ? store.readDocument(deps.db.orm, cabinetId, devisId)
      : store.readAttachment(deps.db.orm, cabinetId, devisId, position);
  if (!file)
    throw new ApiError('not_found', position === undefined ? 'This quote no longer has a PDF.' : 'This quote no longer has this document.');
  return file;
}
