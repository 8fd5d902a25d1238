import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DEVIS_DOCUMENT_KINDS, offreSchema, type DevisDocument, type Offre } from '../../shared/devis-documents.js';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import type { DevisRow } from './store.js';

/** A quote's other document as its record holds (and syncs) it: its file is addressed by content hash. */
export const storedDocumentSchema = z.object({
  kind: z.enum(DEVIS_DOCUMENT_KINDS),
  label: z.string().min(1).max(200),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type StoredDocument = z.infer<typeof storedDocumentSchema>;

export const storedOffresSchema = z.array(offreSchema);

/** What a pricing brings besides its premium and PDF: the formulas offered and the other documents. */
export interface PricedExtras {
  offres?: readonly Offre[] | null;
  documents?: readonly { kind: StoredDocument['kind']; label: string; pdf: Buffer }[];
}

export function offresOf(row: Pick<DevisRow, 'offres'>): Offre[] | null {
  return row.offres === null ? null : (JSON.parse(row.offres) as Offre[]);
}

export function documentsOf(row: Pick<DevisRow, 'documents'>): StoredDocument[] {
  return row.documents === null ? [] : (JSON.parse(row.documents) as StoredDocument[]);
}

function documentPath(devisId: string, position: number): string {
  return `${PUBLIC_API_PREFIX}/devis/${devisId}/documents/${position}`;
}

export function apiDocuments(row: Pick<DevisRow, 'id' | 'documents'>): DevisDocument[] {
  return documentsOf(row).map((doc, index) => ({
    position: index + 1,
    kind: doc.kind,
    label: doc.label,
    url: documentPath(row.id, index + 1),
  }));
}

/** The columns and files a pricing's extras make: a new pricing replaces the previous one's. */
export function extrasToStore(extras: PricedExtras): {
  offres: string | null;
  documents: string | null;
  files: { position: number; pdf: Buffer; sha256: string }[];
} {
  const files = (extras.documents ?? []).map((doc, index) => ({
    position: index + 1,
    pdf: doc.pdf,
    sha256: createHash('sha256').update(doc.pdf).digest('hex'),
  }));
  const stored: StoredDocument[] = (extras.documents ?? []).map((doc, index) => ({
    kind: doc.kind,
    label: doc.label,
    sha256: files[index]!.sha256,
  }));
  return {
    offres: extras.offres && extras.offres.length > 0 ? JSON.stringify(extras.offres) : null,
    documents: stored.length > 0 ? JSON.stringify(stored) : null,
    files,
  };
}
