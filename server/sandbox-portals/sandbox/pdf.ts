import { frenchDateTime } from '../../platform/pdf-text.js';
import { minimalPdf, plainAmount, type PdfLine } from '../pdf.js';
import { formatEuros } from './pricing.js';

/**
 * The sandbox's PDFs, written by the demo portals' minimal PDF writer (../pdf.ts): standard
 * Helvetica, WinAnsi (French accents and € are fine; other characters are replaced by "?").
 *
 * Finding the premium from a test: the page text is in a compressed content stream, but the
 * document information carries it. The documents are saved with `useObjectStreams: false`, so the
 * Info dictionary is written in clear:
 * - /Keywords is a literal ASCII string with the premium written like `toFixed(2)` with a comma
 *   and no thousands separator: `(Sandbox Assurances; devis auto; prime annuelle 1387,15 EUR; …)`,
 *   so `bytes.toString('latin1').includes('1387,15')` finds it;
 * - /Title and /Subject are the French texts ("Devis auto – 1 387,15 € – Jean Dupont"), which
 *   pdf-lib writes as the hex of their UTF-16BE encoding (`/Title <FEFF0044…>`): read them with
 *   `(await PDFDocument.load(bytes)).getTitle()`.
 */

const INSURER_NAME = 'Sandbox Assurances';

export interface QuotePdfInput {
  productLabel: string;
  /** "auto" or "habitation", used in the title. */
  productShort: string;
  insuredName: string;
  premiumEur: number;
  formulaLabel: string;
  reference: string;
  createdAtMs: number;
  /** Lines "Label : value" describing the risk. */
  details: readonly string[];
  pieces?: string;
}

function document(
  title: string,
  subject: string,
  keywords: readonly string[],
  createdAtMs: number,
  lines: readonly PdfLine[],
): Promise<Uint8Array> {
  return minimalPdf({ insurerName: INSURER_NAME, title, subject, keywords, createdAtMs, lines });
}

function quotePdfTitle(input: Pick<QuotePdfInput, 'productShort' | 'premiumEur' | 'insuredName'>): string {
  return `Devis ${input.productShort} – ${formatEuros(input.premiumEur)} – ${input.insuredName}`;
}

export function quotePdf(input: QuotePdfInput): Promise<Uint8Array> {
  const premium = formatEuros(input.premiumEur);
  return document(
    quotePdfTitle(input),
    `${INSURER_NAME} – ${input.productLabel} – formule ${input.formulaLabel} – prime annuelle ${premium} – ${input.insuredName}`,
    [
      INSURER_NAME,
      `devis ${input.productShort}`,
      `prime annuelle ${plainAmount(input.premiumEur)} EUR`,
      `formule ${input.formulaLabel}`,
      `assure ${input.insuredName}`,
      `reference ${input.reference}`,
    ],
    input.createdAtMs,
    [
      { text: INSURER_NAME, size: 20, bold: true },
      { text: `Proposition d’assurance – ${input.productLabel}`, size: 14, bold: true },
      { text: `Référence : ${input.reference}` },
      { text: `Établie le ${frenchDateTime(input.createdAtMs)}` },
      { text: '' },
      { text: `Assuré : ${input.insuredName}` },
      ...input.details.map((text) => ({ text })),
      { text: '' },
      { text: `Formule : ${input.formulaLabel}`, bold: true },
      { text: `Prime annuelle TTC : ${premium}`, size: 14, bold: true },
      ...(input.pieces ? [{ text: `Pièces à fournir : ${input.pieces}` }] : []),
      { text: '' },
      { text: 'Document de démonstration sans valeur contractuelle.', size: 9 },
    ],
  );
}

export function attestationPdf(input: {
  policyNumber: string;
  validFrom: string;
  validTo: string;
  createdAtMs: number;
}): Promise<Uint8Array> {
  return document(
    `Attestation d’assurance – ${input.policyNumber}`,
    `${INSURER_NAME} – attestation d’assurance du contrat ${input.policyNumber}`,
    [INSURER_NAME, 'attestation d’assurance', `contrat ${input.policyNumber}`],
    input.createdAtMs,
    [
      { text: INSURER_NAME, size: 20, bold: true },
      { text: 'Attestation d’assurance', size: 14, bold: true },
      { text: `Contrat n° ${input.policyNumber}` },
      { text: `Période de validité : du ${input.validFrom} au ${input.validTo}` },
      { text: `Délivrée le ${frenchDateTime(input.createdAtMs)}` },
      { text: '' },
      { text: 'Document de démonstration sans valeur contractuelle.', size: 9 },
    ],
  );
}
