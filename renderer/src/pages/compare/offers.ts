import type { Comparison } from '../../../../shared/comparaisons.js';
import type { Offre } from '../../../../shared/devis-documents.js';

/**
 * The offers of a comparison side by side: which ones cover every guarantee the broker asked for,
 * the cheapest of those and the one that covers most.
 */
export type Result = Comparison['resultats'][number];

/** An offer with where it comes from, so that a mark names one offer of one insurer. */
export interface PlacedOffer {
  compagnie: string;
  offre: Offre;
}

/** The guarantees an offer includes, by the line's codes. */
function includedCodes(offre: Offre): Set<string> {
  return new Set(offre.garanties.filter((g) => g.incluse).map((g) => g.code));
}

/** The wanted guarantees an offer does not include (empty: it matches the filter). */
export function missingGuarantees(offre: Offre, wanted: readonly string[]): string[] {
  const included = includedCodes(offre);
  return wanted.filter((code) => !included.has(code));
}

/** One offer of one insurer, as the marks name it. */
export const offerKey = (compagnie: string, formule: string) => `${compagnie}/${formule}`;
const key = (o: PlacedOffer) => offerKey(o.compagnie, o.offre.formule);

/**
 * The cheapest offer (by annual premium) and the broadest (most guarantees included, the cheaper
 * on a tie) among those that include every wanted guarantee; null when none does. With a single
 * offer, it is both.
 */
export function marks(results: readonly Result[], wanted: readonly string[]): { cheapest: string | null; broadest: string | null } {
  const offers = results.flatMap((r) => r.offres.map((offre) => ({ compagnie: r.compagnie, offre })));
  const matching = offers.filter((o) => missingGuarantees(o.offre, wanted).length === 0);
  if (matching.length === 0) return { cheapest: null, broadest: null };
  const byPrice = [...matching].sort((a, b) => a.offre.prime_annuelle_eur - b.offre.prime_annuelle_eur);
  const byCover = [...byPrice].sort((a, b) => includedCodes(b.offre).size - includedCodes(a.offre).size);
  return { cheapest: key(byPrice[0]!), broadest: key(byCover[0]!) };
}

/** The guarantee codes any offer of the comparison mentions, in the line's order, for the filter. */
export function guaranteesOffered(results: readonly Result[], lineOrder: readonly string[]): string[] {
  const seen = new Set(results.flatMap((r) => r.offres.flatMap((o) => o.garanties.map((g) => g.code))));
  return [...lineOrder.filter((code) => seen.has(code)), ...[...seen].filter((code) => !lineOrder.includes(code))];
}
