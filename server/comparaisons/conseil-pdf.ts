import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import { encodableText } from '../platform/pdf-text.js';

/** One paragraph of the advice document: a heading, or text wrapped to the page. */
export interface AdviceBlock {
  text: string;
  heading?: boolean;
}

const PAGE: [number, number] = [595.28, 841.89]; // A4
const MARGIN = 56;
const SIZE = 10.5;
const HEADING_SIZE = 13;

/** The text's lines, at most `width` points wide each, broken between words. */
function wrap(font: PDFFont, size: number, text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      const candidate = line ? `${line} ${word}` : word;
      if (line && font.widthOfTextAtSize(candidate, size) > width) {
        lines.push(line);
        line = word;
      } else line = candidate;
    }
    lines.push(line);
  }
  return lines;
}

/** The advice document as a PDF: A4 pages of headings and wrapped paragraphs, in Helvetica. */
export async function advicePdf(input: {
  title: string;
  author: string;
  createdAtMs: number;
  blocks: readonly AdviceBlock[];
}): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  pdf.setTitle(input.title);
  pdf.setAuthor(input.author);
  pdf.setCreator('Courtier');
  pdf.setProducer('pdf-lib');
  pdf.setLanguage('fr-FR');
  pdf.setCreationDate(new Date(input.createdAtMs));
  pdf.setModificationDate(new Date(input.createdAtMs));
  let page: PDFPage = pdf.addPage(PAGE);
  let y = PAGE[1] - MARGIN;
  const width = PAGE[0] - 2 * MARGIN;
  for (const block of input.blocks) {
    const font = block.heading ? bold : regular;
    const size = block.heading ? HEADING_SIZE : SIZE;
    if (block.heading) y -= 6;
    for (const line of wrap(font, size, encodableText(font, block.text), width)) {
      if (y < MARGIN + size) {
        page = pdf.addPage(PAGE);
        y = PAGE[1] - MARGIN;
      }
      page.drawText(line, { x: MARGIN, y, size, font, color: rgb(0.1, 0.1, 0.1) });
      y -= size + 5;
    }
    y -= 4;
  }
  return Buffer.from(await pdf.save());
}
