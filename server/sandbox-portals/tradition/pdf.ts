import { PDFDict, PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';
import { formatEuros } from '../sandbox/pricing.js';
import type { Priced } from './products.js';

/**
 * A Mutuelle Tradition quote as a one-page PDF. Its /Keywords is a literal ASCII string holding the
 * premium as "530,56" (saved without object streams), so a test finds it in the bytes.
 */
export async function quotePdf(input: { no: string; productLabel: string; priced: Priced; pricedAtMs: number }): Promise<Uint8Array> {
  const { priced } = input;
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  pdf.setTitle(`${input.productLabel} n°${input.no} – ${formatEuros(priced.premiumEur)}`);
  pdf.setAuthor('Mutuelle Tradition');
  pdf.setCreationDate(new Date(input.pricedAtMs));
  pdf.setModificationDate(new Date(input.pricedAtMs));
  const plain = priced.premiumEur.toFixed(2).replace('.', ',');
  const keywords = `Mutuelle Tradition; devis ${input.no}; prime annuelle ${plain} EUR`;
  pdf.context.lookup(pdf.context.trailerInfo.Info, PDFDict).set(PDFName.of('Keywords'), PDFString.of(keywords));
  const page = pdf.addPage([595.28, 841.89]);
  const lines = [
    'Mutuelle Tradition',
    `${input.productLabel} n°${input.no}`,
    `Souscripteur : ${priced.insuredName}`,
    ...priced.details,
    `Formule : ${priced.formule}`,
    `Prime annuelle TTC : ${formatEuros(priced.premiumEur)}`,
    'Document de démonstration sans valeur contractuelle.',
  ];
  let y = 790;
  for (const line of lines) {
    // WinAnsi cannot draw every character: unknown ones become "?".
    const text = [...line].map((ch) => (/[\u0020-\u00ff€–’]/u.test(ch) ? ch : '?')).join('');
    page.drawText(text, { x: 56, y, size: 11, font });
    y -= 20;
  }
  return pdf.save({ useObjectStreams: false });
}
