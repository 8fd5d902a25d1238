/** Letters that do not decompose into a base letter and an accent. */
const LIGATURES: Record<string, string> = { ß: 'ss', æ: 'ae', Æ: 'AE', œ: 'oe', Œ: 'OE', ø: 'o', Ø: 'O', đ: 'd', Đ: 'D', ł: 'l', Ł: 'L' };

/** One part of a file name in ASCII letters, digits and dashes: accents dropped, anything else a dash. */
function asciiPart(text: string | null, maxLength: number): string {
  if (text === null) return '';
  const plain = text
    .replace(/[ßæÆœŒøØđĐłŁ]/g, (c) => LIGATURES[c] ?? '')
    .normalize('NFD')
    .replace(/\p{M}/gu, '');
  return plain
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/, '');
}

/**
 * The name a quote's PDF downloads under: Devis_Dupont_Assurance-auto_2026-11-23.pdf. ASCII only
 * (every browser and file system takes it, and it needs no RFC 5987 encoding), no path characters,
 * and a part that is missing or has no letter left is left out.
 */
export function devisPdfFileName(quote: { name: string | null; productLabel: string | null; date: string }): string {
  const parts = ['Devis', asciiPart(quote.name, 40), asciiPart(quote.productLabel, 40), asciiPart(quote.date, 10)];
  return `${parts.filter((part) => part !== '').join('_')}.pdf`;
}
