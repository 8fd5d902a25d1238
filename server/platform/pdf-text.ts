import type { PDFFont } from 'pdf-lib';

/**
 * The text as a standard PDF font (WinAnsi) can draw it: French accents and € are kept, any other
 * character becomes "?" rather than failing the whole document.
 */
export function encodableText(font: PDFFont, text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC')) {
    try {
      font.encodeText(ch);
      out += ch;
    } catch {
      out += '?';
    }
  }
  return out;
}
