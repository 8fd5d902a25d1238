import { RobotError, type RobotResult } from '@courtier/adapter-kit';
import { z } from 'zod';
import {
  DEVIS_DOCUMENT_KINDS,
  MAX_DEVIS_DOCUMENT_BYTES,
  MAX_DEVIS_DOCUMENTS,
  MAX_GARANTIES,
  MAX_OFFRES,
  type Offre,
} from '../../shared/devis-documents.js';
import type { PricedExtras } from '../devis/service.js';

const text = (max: number) => z.string().trim().min(1).max(max);
const euros = z.number().finite().min(0).max(100_000_000);
const optionalEuros = euros.nullish().transform((value) => value ?? null);

/** What an adapter may return beyond its premium and PDF; adapters are code from elsewhere, so it is checked. */
const extrasSchema = z.object({
  offres: z
    .array(
      z.object({
        formule: text(60),
        libelle: text(200),
        prime_annuelle_eur: euros,
        prime_mensuelle_eur: optionalEuros,
        franchise_eur: optionalEuros,
        garanties: z
          .array(z.object({ code: text(60), libelle: text(200), incluse: z.boolean(), plafond_eur: optionalEuros }))
          .max(MAX_GARANTIES),
      }),
    )
    .max(MAX_OFFRES)
    .optional(),
  documents: z
    .array(
      z.object({
        kind: z.enum(DEVIS_DOCUMENT_KINDS),
        label: text(200),
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
  return { offres: (parsed.data.offres as Offre[] | undefined) ?? null, documents: parsed.data.documents ?? [] };
}
