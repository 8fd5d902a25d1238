import { PDFDict, PDFDocument, PDFName, PDFString, StandardFonts, rgb } from 'pdf-lib';
import { encodableText } from '../platform/pdf-text.js';

/**
 * The demo portals' PDFs: one A4 page of lines drawn with pdf-lib's standard Helvetica (WinAnsi:
 * French accents and € are fine; other characters are replaced by "?").
 *
 * Finding a figure from a test: the page text is in a compressed content stream, but the document
 * information carries it. The documents are saved with `useObjectStreams: false`, so the Info
 * dictionary is written in clear: /Keywords is a literal ASCII string (amounts written like
 * `toFixed(2)` with a comma, see plainAmount), greppable in the bytes; /Title and /Subject are the
 * French texts, which pdf-lib writes as UTF-16BE hex: read them with `PDFDocument.load(bytes)`.
 */

export interface PdfLine {
  text: string;
  size?: number;
  bold?: boolean;
}

export interface PdfInput {
  /** The author, and the creator's name. */
  insurerName: string;
  title: string;
  subject: string;
  keywords: readonly string[];
  createdAtMs: number;
  lines: readonly PdfLine[];
}

/** Printable ASCII only, without the characters a PDF literal string would need escaped. */
function asciiText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/€/g, 'EUR')
    .replace(/[–—]/g, '-')
    .replace(/[’‘]/g, "'")
    .replace(/[^\x20-\x7e]/gu, '?')
    .replace(/[()\\]/g, '');
}

/** "1387,15": an amount as tests search it in the bytes. */
export function plainAmount(amount: number): string {
  return amount.toFixed(2).replace('.', ',');
}

export async function minimalPdf(input: PdfInput): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  pdf.setTitle(input.title);
  pdf.setSubject(input.subject);
  pdf.setAuthor(input.insurerName);
  pdf.setCreator(`${input.insurerName} (sandbox Courtier)`);
  pdf.setProducer('pdf-lib');
  pdf.setLanguage('fr-FR');
  pdf.setCreationDate(new Date(input.createdAtMs));
  pdf.setModificationDate(new Date(input.createdAtMs));
  // setKeywords would write UTF-16 hex; a literal ASCII string keeps the amounts greppable.
  pdf.context
    .lookup(pdf.context.trailerInfo.Info, PDFDict)
    .set(PDFName.of('Keywords'), PDFString.of(input.keywords.map(asciiText).join('; ')));
  const page = pdf.addPage([595.28, 841.89]); // A4
  let y = 790;
  for (const line of input.lines) {
    const size = line.size ?? 11;
    const font = line.bold ? bold : regular;
    page.drawText(encodableText(font, line.text), { x: 56, y, size, font, color: rgb(0.1, 0.1, 0.1) });
    y -= size + 9;
  }
  return pdf.save({ useObjectStreams: false });
}
