import { createHmac, timingSafeEqual } from 'node:crypto';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { PDF_LINK_TTL_SECONDS } from '../../shared/devis.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { notFound } from './service.js';
import * as store from './store.js';

/** Download links to a quote's PDF: what an integrator's browser or an assistant opens without the API key. */

function linkPath(devisId: string): string {
  return `${PUBLIC_API_PREFIX}/files/devis/${devisId}.pdf`;
}

function linkSignature(key: Buffer, devisId: string, cabinetId: string, expires: string): Buffer {
  return createHmac('sha256', key)
    .update(`${linkPath(devisId)}\n${cabinetId}\n${expires}`)
    .digest();
}

/** A download link valid 5 minutes: HMAC over the path, the cabinet and the expiry. */
export function createPdfLink(deps: Deps, cabinetId: string, id: string): string {
  const row = store.findDevis(deps.db.orm, cabinetId, id);
  if (!row) throw notFound(id);
  if (row.pdfSha256 === null) throw new ApiError('pdf_not_available', `The quote ${id} has no PDF: it is ${row.status}, not priced.`);
  // A quote priced on another install whose PDF never reached this one (sync): no link to a missing file.
  if (!store.hasDocument(deps.db.orm, cabinetId, id)) {
    throw new ApiError(
      'pdf_not_available',
      `The quote ${id} was priced on another install of the cabinet, and its PDF did not reach this one.`,
    );
  }
  const expires = String(Math.floor(deps.clock.now() / 1000) + PDF_LINK_TTL_SECONDS);
  const signature = linkSignature(deps.keys.downloadLink, id, cabinetId, expires).toString('hex');
  return `${linkPath(id)}?cabinet_id=${cabinetId}&expires=${expires}&signature=${signature}`;
}

/** The PDF behind a signed link; anything altered or expired is one 403 invalid_signature. */
export function readPdfFromLink(deps: Deps, link: { devisId: string; cabinetId?: string; expires?: string; signature?: string }): Buffer {
  const { devisId, cabinetId, expires, signature } = link;
  const refuse = (why: string) =>
    new ApiError(
      'invalid_signature',
      `This download link is not valid: ${why}. Ask GET ${PUBLIC_API_PREFIX}/devis/{devis_id}/pdf for a new one.`,
    );
  if (!cabinetId || !expires || !signature || !/^\d{1,15}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature))
    throw refuse('it is incomplete');
  const expected = linkSignature(deps.keys.downloadLink, devisId, cabinetId, expires);
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw refuse('it was altered');
  if (Number(expires) * 1000 <= deps.clock.now()) throw refuse('it has expired (links live 5 minutes)');
  const pdf = store.readDocument(deps.db.orm, cabinetId, devisId);
  if (!pdf) throw new ApiError('not_found', 'This quote no longer has a PDF.');
  return pdf;
}
