import type { JobStatus } from '../../shared/automation.js';
import type { Comparison } from '../../shared/comparaisons.js';
import type { Offre } from '../../shared/devis-documents.js';
import { TERMINAL_STATUSES } from '../../shared/automation.js';

/**
 * A comparison's status from its jobs': pending until a robot starts, running while one is not done,
 * then completed (every insurer priced), partial (some did) or failed (none did).
 */
export function comparisonStatus(statuses: readonly JobStatus[]): Comparison['status'] {
  if (statuses.every((s) => s === 'pending')) return 'pending';
  if (statuses.some((s) => !TERMINAL_STATUSES.includes(s))) return 'running';
  const priced = statuses.filter((s) => s === 'completed' || s === 'partial').length;
  if (priced === statuses.length) return 'completed';
  return priced > 0 ? 'partial' : 'failed';
}

/**
 * An insurer's offers as a comparison shows them: its guarantees under the line's codes (two of its
 * own that the line counts as one are merged: included if either is, the higher limit), or, from a
 * portal that shows one price, one offer made of it.
 */
export function comparisonOffers(
  offres: readonly Offre[],
  tarifEur: number,
  guarantees: Readonly<Record<string, string>> | undefined,
): Offre[] {
  if (offres.length === 0)
    return [
      {
        formule: 'tarif',
        libelle: 'Tarif du devis',
        prime_annuelle_eur: tarifEur,
        prime_mensuelle_eur: null,
        franchise_eur: null,
        garanties: [],
      },
    ];
  return offres.map((offre) => {
    const merged = new Map<string, Offre['garanties'][number]>();
    for (const garantie of offre.garanties) {
      const code = guarantees?.[garantie.code] ?? garantie.code;
      const seen = merged.get(code);
      if (!seen) {
        merged.set(code, { ...garantie, code });
        continue;
      }
      const limits = [seen.plafond_eur, garantie.plafond_eur].filter((l): l is number => l !== null);
      merged.set(code, {
        ...seen,
        libelle: `${seen.libelle}, ${garantie.libelle}`,
        incluse: seen.incluse || garantie.incluse,
        plafond_eur: limits.length ? Math.max(...limits) : null,
      });
    }
    return { ...offre, garanties: [...merged.values()] };
  });
}
