import type { JobStatus } from '../../shared/automation.js';
import type { Comparison } from '../../shared/comparaisons.js';
import type { Offre } from '../../shared/devis-documents.js';
import { TERMINAL_STATUSES } from '../../shared/automation.js';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { findJob } from '../automation/jobs.js';
import type { Deps } from '../deps.js';
import { getDevis } from '../devis/service.js';
import { toIso } from '../platform/iso-time.js';
import type { ComparisonRow } from './store.js';
import { comparisonJobsSchema } from './sync.js';

export const pollUrl = (id: string) => `${PUBLIC_API_PREFIX}/automation/comparaisons/${id}`;

/**
 * A comparison's status from its jobs': pending until a robot starts, running while one is not done,
 * then completed (every insurer priced), partial (some did) or failed (none did).
 */
function comparisonStatus(statuses: readonly JobStatus[]): Comparison['status'] {
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
function comparisonOffers(offres: readonly Offre[], tarifEur: number, guarantees: Readonly<Record<string, string>> | undefined): Offre[] {
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

/** An insurer's entry before its job reaches this install (another install of the cabinet runs it): waiting, as far as this install knows. */
function notHereYet(entry: { compagnie: string; produit: string; job_id: string; devis_id: string }) {
  return { ...entry, status: 'pending' as const, tarif_eur: null, offres: [], pdf_url: null, error: null, credits: 0 };
}

/** A comparison as the API answers it, read from its jobs and quotes through their services. */
export function toComparison(deps: Deps, row: ComparisonRow): Comparison {
  const entries = comparisonJobsSchema.parse(JSON.parse(row.jobs));
  const resultats = entries.flatMap(({ compagnie, produit, job_id, devis_id }) => {
    const job = findJob(deps, row.cabinetId, job_id);
    if (!job) return devis_id === undefined ? [] : [notHereYet({ compagnie, produit, job_id, devis_id })];
    const tarif = job.result?.tarif_eur ?? null;
    const offres =
      tarif === null
        ? []
        : comparisonOffers(
            getDevis(deps, row.cabinetId, job.devis_id).offres ?? [],
            tarif,
            deps.insurers.get(compagnie)?.risks?.[row.ligne]?.guarantees,
          );
    return [
      {
        compagnie,
        produit,
        job_id,
        status: job.status,
        devis_id: job.devis_id,
        tarif_eur: tarif,
        offres,
        pdf_url: job.result?.pdf_url ?? null,
        error: job.error,
        credits: job.credits_consumed,
      },
    ];
  });
  return {
    comparaison_id: row.id,
    ligne: row.ligne,
    client_id: row.clientId,
    status: comparisonStatus(resultats.map((r) => r.status)),
    resultats: resultats.map(({ credits: _credits, ...resultat }) => resultat),
    ecartees: JSON.parse(row.ecartees) as Comparison['ecartees'],
    poll_url: pollUrl(row.id),
    credits_consumed: resultats.reduce((sum, r) => sum + r.credits, 0),
    created_at: toIso(row.createdAt),
  };
}
