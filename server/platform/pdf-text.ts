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

/** A date and time as a French document prints it ("3 décembre 2026 à 22:14"), in Paris time. */
export function frenchDateTime(ms: number): string {
  return new Date(ms).toLocaleString('fr-FR', { timeZone: 'Europe/Paris', dateStyle: 'long', timeStyle: 'short' }).replace(/\u202f/g, ' ');
}
