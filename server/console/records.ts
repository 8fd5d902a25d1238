import type { ConsoleWallet } from '../../shared/console-admin.js';
import type { ConsoleDevis, ConsoleOpportunity } from '../../shared/console-records.js';
import type { Opportunity } from '../../shared/crm.js';
import type { Devis } from '../../shared/devis.js';
import { findJob } from '../automation/jobs.js';
import { clientNames } from '../crm/clients.js';
import type { Deps } from '../deps.js';
import { devisPdfFileName } from '../devis/file-name.js';
import { findDevis, readDevisDocument } from '../devis/service.js';
import { getWallet } from '../wallet/service.js';

/**
 * What the console shows of the records beyond the REST API's answers: the names behind a quote's
 * ids, and a PDF's file name. Everything is read through the modules' services.
 */

/** The insurer's and the product's names, or their codes when this install no longer has them. */
function catalogueNames(deps: Pick<Deps, 'insurers'>, compagnie: string, produit: string): { insurer: string; product: string } {
  const adapter = deps.insurers.get(compagnie);
  const product =
    adapter?.products.find((p) => p.code === produit) ??
    deps.insurers
      .list()
      .flatMap((a) => a.products)
      .find((p) => p.code === produit);
  return { insurer: adapter?.name ?? compagnie, product: product?.label ?? produit };
}

/** Quotes with the client's name, the product's label and the job that priced them. */
export function describeDevis(deps: Deps, cabinetId: string, quotes: readonly Devis[]): ConsoleDevis[] {
  const names = clientNames(
    deps,
    cabinetId,
    quotes.flatMap((q) => (q.client_id === null ? [] : [q.client_id])),
  );
  return quotes.map((quote) => {
    const client = quote.client_id === null ? undefined : names.get(quote.client_id);
    const { insurer, product } = catalogueNames(deps, quote.compagnie, quote.produit);
    const job = quote.job_id === null ? null : findJob(deps, cabinetId, quote.job_id);
    return {
      ...quote,
      client_name: client?.name ?? null,
      client_erased: quote.client_id !== null && client === undefined,
      product_label: product,
      insurer_name: insurer,
      job: job && { job_id: job.job_id, status: job.status, created_at: job.created_at },
    };
  });
}

/** One quote, described. */
export function describeOneDevis(deps: Deps, cabinetId: string, quote: Devis): ConsoleDevis {
  const [described] = describeDevis(deps, cabinetId, [quote]);
  if (!described) throw new Error('describeDevis answers one quote per quote');
  return described;
}

/** A date as the machine's calendar shows it (the service runs in the office it serves). */
function localDate(epochMs: number): string {
  const date = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/**
 * A quote's PDF and the name it downloads under: the client (or, for a quote priced without one,
 * the insured named in its data), the product, the day it was priced.
 */
export function devisPdfDownload(deps: Deps, cabinetId: string, devisId: string): { pdf: Buffer; fileName: string } {
  const { pdf, storedAt, devis } = readDevisDocument(deps, cabinetId, devisId);
  const client = devis.client_id === null ? undefined : clientNames(deps, cabinetId, [devis.client_id]).get(devis.client_id);
  const insured = devis.dicData.insured_name;
  const name = client?.short ?? (devis.client_id === null && typeof insured === 'string' ? insured : null);
  const fileName = devisPdfFileName({
    name,
    productLabel: catalogueNames(deps, devis.compagnie, devis.produit).product,
    date: localDate(storedAt),
  });
  return { pdf, fileName };
}

/** The wallet with each debit and refund named by its pricing: the client, the product, the insurer. */
export function describeWallet(deps: Deps, cabinetId: string): ConsoleWallet {
  const wallet = getWallet(deps, cabinetId);
  return {
    ...wallet,
    ledger: wallet.ledger.map((entry) => ({ ...entry, pricing: entry.job_id === null ? null : pricingOf(deps, cabinetId, entry.job_id) })),
  };
}

function pricingOf(deps: Deps, cabinetId: string, jobId: string): ConsoleWallet['ledger'][number]['pricing'] {
  const job = findJob(deps, cabinetId, jobId);
  const quote = job && findDevis(deps, cabinetId, job.devis_id);
  if (!job || !quote) return null;
  const described = describeOneDevis(deps, cabinetId, quote);
  return {
    job_id: job.job_id,
    devis_id: quote.devis_id,
    client_id: quote.client_id,
    client_name: described.client_name,
    product_label: described.product_label,
    insurer_name: described.insurer_name,
  };
}

/** Opportunities with their client's name (none without a client, or once it was erased): one query for the lot. */
export function describeOpportunities(deps: Deps, cabinetId: string, opportunities: readonly Opportunity[]): ConsoleOpportunity[] {
  const names = clientNames(
    deps,
    cabinetId,
    opportunities.flatMap((o) => (o.client_id === null ? [] : [o.client_id])),
  );
  return opportunities.map((o) => ({ ...o, client_name: (o.client_id === null ? undefined : names.get(o.client_id))?.name ?? null }));
}

export function describeOpportunity(deps: Deps, cabinetId: string, opportunity: Opportunity): ConsoleOpportunity {
  const client =
    opportunity.client_id === null ? undefined : clientNames(deps, cabinetId, [opportunity.client_id]).get(opportunity.client_id);
  return { ...opportunity, client_name: client?.name ?? null };
}
