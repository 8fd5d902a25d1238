import { createHash } from 'node:crypto';
import { LINE_GUARANTEES, type RiskLine } from '@courtier/adapter-kit';
import type { AuditActor } from '../audit/service.js';
import { recordAudit } from '../audit/service.js';
import type { Comparison, Conseil } from '../../shared/comparaisons.js';
import type { Client } from '../../shared/crm.js';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import type { Page } from '../../shared/pagination.js';
import { getJob } from '../automation/jobs.js';
import { getClient } from '../crm/clients.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { atomically } from '../platform/db/atomically.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import { clientListPage, type ClientListQuery } from '../platform/http/cursor.js';
import { toIso } from '../platform/iso-time.js';
import { frenchDateTime } from '../platform/pdf-text.js';
import { cabinetName, getCabinetSettings } from '../tenancy/service.js';
import { advicePdf, type AdviceBlock } from './conseil-pdf.js';
import { getComparison, LINE_LABELS } from './service.js';
import * as store from './store.js';
import { conseilRecords } from './sync.js';

const euros = (amount: number | null) =>
  amount === null
    ? '—'
    : `${amount.toLocaleString('fr-FR', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).replace(/\u202f/g, ' ')} €`;

function clientName(client: Client): string {
  if (client.type === 'company') return client.company_name ?? '';
  return [client.first_name, client.last_name].filter(Boolean).join(' ');
}

/** The risk as hashed for the evidence: its JSON with keys sorted, so that the same risk gives the same hash. */
function riskHash(risque: string): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
          )
        : value;
  return createHash('sha256')
    .update(JSON.stringify(canonical(JSON.parse(risque))))
    .digest('hex');
}

type Resultat = Comparison['resultats'][number];

/** The offer recommended: the insurer's formula named, or the one its quote was priced for (its tarif). */
function recommendedOffer(comparison: Comparison, compagnie: string, formule: string | undefined) {
  const resultat = comparison.resultats.find((r) => r.compagnie === compagnie && r.tarif_eur !== null);
  if (!resultat) throw new ApiError('offer_not_priced', `${compagnie} gave no price in this comparison.`, { compagnie });
  const offre =
    formule === undefined
      ? (resultat.offres.find((o) => o.prime_annuelle_eur === resultat.tarif_eur) ?? resultat.offres[0])
      : resultat.offres.find((o) => o.formule === formule);
  if (!offre)
    throw new ApiError('offer_not_priced', `${compagnie} offered no formula ${formule ?? ''} in this comparison.`, {
      compagnie,
      formules: resultat.offres.map((o) => o.formule),
    });
  return { resultat, offre };
}

function offerLines(line: RiskLine, resultat: Resultat, names: ReadonlyMap<string, string>): AdviceBlock[] {
  const insurer = names.get(resultat.compagnie) ?? resultat.compagnie;
  if (resultat.tarif_eur === null) return [{ text: `${insurer} : pas de tarif (${resultat.error?.message ?? resultat.status}).` }];
  const labels = LINE_GUARANTEES[line] as Record<string, { fr: string }>;
  return resultat.offres.map((offre) => {
    const included = offre.garanties.filter((g) => g.incluse).map((g) => labels[g.code]?.fr ?? g.libelle);
    return {
      text:
        `${insurer} — ${offre.libelle} : ${euros(offre.prime_annuelle_eur)} par an` +
        (offre.prime_mensuelle_eur === null ? '' : ` (${euros(offre.prime_mensuelle_eur)} par mois)`) +
        (offre.franchise_eur === null ? '' : `, franchise ${euros(offre.franchise_eur)}`) +
        (included.length ? `. Garanties : ${included.join(', ')}.` : '.'),
    };
  });
}

const pdfPath = (id: string) => `${PUBLIC_API_PREFIX}/automation/conseils/${id}/pdf`;

function toConseil(row: store.ConseilRow): Conseil {
  return {
    conseil_id: row.id,
    comparaison_id: row.comparaisonId,
    client_id: row.clientId,
    compagnie: row.compagnie,
    formule: row.formule,
    pdf_url: pdfPath(row.id),
    pdf_sha256: row.pdfSha256,
    created_at: toIso(row.createdAt),
  };
}

/**
 * The advice document of a finished comparison for a client: its PDF made, kept with its hash, and
 * its creation audited, in one transaction.
 */
export async function createConseil(
  deps: Deps,
  cabinetId: string,
  comparaisonId: string,
  request: { compagnie: string; formule?: string | undefined; motif: string; besoins: string },
  actor: AuditActor,
): Promise<Conseil> {
  const comparison = getComparison(deps, cabinetId, comparaisonId);
  if (comparison.status === 'pending' || comparison.status === 'running')
    throw new ApiError('comparison_not_finished', 'Some insurers are still pricing this comparison.', { status: comparison.status });
  if (comparison.client_id === null) throw new ApiError('client_required', 'This comparison is for no client.');
  const { offre } = recommendedOffer(comparison, request.compagnie, request.formule);
  const client = getClient(deps, cabinetId, comparison.client_id);
  const row = store.findComparison(deps.db.orm, cabinetId, comparaisonId)!;
  const names = new Map(comparison.resultats.map((r) => [r.compagnie, deps.insurers.get(r.compagnie)?.name ?? r.compagnie]));
  const now = deps.clock.now();
  const cabinet = cabinetName(deps, cabinetId) ?? '';
  const { orias, address } = getCabinetSettings(deps, cabinetId);
  const line = comparison.ligne;
  const evidence = comparison.resultats.map((r) => {
    const job = getJob(deps, cabinetId, r.job_id);
    const adapter = job.adapter ? `${job.adapter.code} ${job.adapter.version}` : 'aucun robot';
    return {
      text: `${names.get(r.compagnie)} : devis ${r.devis_id}, tarifé par l’adaptateur ${adapter} le ${frenchDateTime(Date.parse(job.updated_at))}.`,
    };
  });
  const blocks: AdviceBlock[] = [
    { text: `Document de conseil — ${LINE_LABELS[line].fr.toLowerCase()}`, heading: true },
    { text: `Cabinet : ${cabinet}${address ? `, ${address}` : ''}. Établi le ${frenchDateTime(now)}.` },
    {
      text: orias
        ? `Courtier en assurance immatriculé à l’ORIAS sous le n° ${orias} (www.orias.fr).`
        : 'Numéro ORIAS : à renseigner dans les réglages du cabinet.',
    },
    { text: `Client : ${clientName(client)}.` },
    { text: 'Besoins et exigences exprimés', heading: true },
    { text: request.besoins },
    { text: 'Offres comparées', heading: true },
    ...comparison.resultats.flatMap((r) => offerLines(line, r, names)),
    ...comparison.ecartees.map((e) => ({ text: `${deps.insurers.get(e.compagnie)?.name ?? e.compagnie} : non interrogée (${e.message})` })),
    { text: 'Offre recommandée', heading: true },
    { text: `${names.get(request.compagnie)} — ${offre.libelle} : ${euros(offre.prime_annuelle_eur)} par an.` },
    { text: `Motif : ${request.motif}` },
    { text: 'Éléments de preuve', heading: true },
    ...evidence,
    { text: `Empreinte SHA-256 des données du risque : ${riskHash(row.risque)}.` },
    { text: `Comparaison ${comparison.comparaison_id}.` },
  ];
  const pdf = await advicePdf({ title: `Document de conseil — ${clientName(client)}`, author: cabinet, createdAtMs: now, blocks });
  const id = timeOrderedUuid(now, deps.randomBytes);
  const conseil: store.ConseilRow = {
    id,
    cabinetId,
    comparaisonId,
    clientId: comparison.client_id,
    compagnie: request.compagnie,
    formule: offre.formule,
    motif: request.motif,
    besoins: request.besoins,
    pdf,
    pdfSha256: createHash('sha256').update(pdf).digest('hex'),
    createdAt: now,
  };
  atomically(deps.db, () => {
    conseilRecords.insert(deps, conseil);
    recordAudit(deps, {
      cabinetId,
      action: 'conseil.created',
      actor,
      target: id,
      details: { comparaison_id: comparaisonId, client_id: conseil.clientId, compagnie: conseil.compagnie, formule: conseil.formule },
    });
  });
  return toConseil(conseil);
}

export function conseilPdf(deps: Deps, cabinetId: string, id: string): Buffer {
  const row = store.findConseil(deps.db.orm, cabinetId, id);
  if (!row) throw new ApiError('not_found', `No advice document with id ${id} in this cabinet.`);
  if (row.pdf === null)
    throw new ApiError(
      'pdf_not_available',
      'This advice document was made on another computer of the cabinet and its PDF has not arrived yet.',
    );
  return row.pdf;
}

export function listConseils(deps: Deps, cabinetId: string, query: ClientListQuery): Page<Conseil> {
  return clientListPage(
    deps.keys.cursor,
    { cabinetId, resource: 'conseils' },
    query,
    (filters, limit) => store.listConseils(deps.db.orm, cabinetId, filters, limit),
    toConseil,
  );
}
