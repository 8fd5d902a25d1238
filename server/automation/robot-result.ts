import { RobotError, type RobotResult } from '@courtier/adapter-kit';
import { z } from 'zod';
import { devisDocumentSchema, MAX_DEVIS_DOCUMENT_BYTES, MAX_DEVIS_DOCUMENTS, robotOffresSchema } from '../../shared/devis-documents.js';
import type { PricedExtras } from '../devis/service.js';

/** What an adapter may return beyond its premium and PDF; adapters are code from elsewhere, so it is checked. */
const extrasSchema = z.object({
  offres: robotOffresSchema.optional(),
  documents: z
    .array(
      z.object({
        kind: devisDocumentSchema.shape.kind,
        label: devisDocumentSchema.shape.label,
        pdf: z.instanceof(Buffer).refine((pdf) => pdf.length > 0 && pdf.length <= MAX_DEVIS_DOCUMENT_BYTES, 'between 1 byte and 10 MB'),
      }),
    )
    .max(MAX_DEVIS_DOCUMENTS)
    .optional(),
});

/**
 * The offers and other documents of a robot's result, checked: a result out of bounds fails the job
 * as a technical error of the adapter (refunded), never as a half-stored quote.
 */
export function resultExtras(result: RobotResult): PricedExtras {
  const parsed = extrasSchema.safeParse({ offres: result.offres, documents: result.documents });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).slice(0, 3);
    throw new RobotError('technical', 'invalid_result', `The robot's result does not fit what a quote holds: ${problems.join('; ')}.`);
  }
  return { offres: parsed.data.offres ?? null, documents: parsed.data.documents ?? [] };
}
