import { createHash } from 'node:crypto';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { ERASED_RECORD_FIELDS } from '../../shared/erasure.js';
import type { CreateDevisInput, Devis } from '../../shared/devis.js';
import { opportunityExists, winOpportunityIfOpen } from '../crm/service.js';
import { clientExists } from '../crm/clients.js';
import { atomically } from '../platform/db/atomically.js';
import { nameBasedUuid } from '../platform/db/name-based-id.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import type { Deps } from '../deps.js';
import { toIso, toIsoOrNull } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { validationError } from '../platform/http/validation.js';
import { recordEvent } from '../events/service.js';
import { rewriteStoredResponses } from '../idempotency/service.js';
import { apiDocuments, extrasToStore, offresOf, type PricedExtras } from './documents.js';
import * as store from './store.js';
import { contractRecords, devisRecords } from './sync.js';

export type { PricedExtras } from './documents.js';

const euros = (cents: number) => cents / 100;

export function devisPdfPath(devisId: string): string {
  return `${PUBLIC_API_PREFIX}/devis/${devisId}/pdf`;
}

export function toDevis(row: store.DevisRow): Devis {
  return {
    id: row.id,
    devis_id: row.id,
    status: row.status,
    client_id: row.clientId,
    opportunity_id: row.opportunityId,
    compagnie: row.compagnie,
    produit: row.produit,
    dicData: JSON.parse(row.dicData) as Record<string, unknown>,
    tarif_eur: row.tarifCents === null ? null : euros(row.tarifCents),
    suspens: row.suspens,
    pdf_available: row.pdfSha256 !== null,
    pdf_url: row.pdfSha256 === null ? null : devisPdfPath(row.id),
    offres: offresOf(row),
    documents: apiDocuments(row),
    job_id: row.jobId,
    contract_id: row.contractId,
    signed_at: toIsoOrNull(row.signedAt),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

export function notFound(id: string): ApiError {
  return new ApiError('not_found', `No quote (devis) with id ${id} in this cabinet.`);
}

const unknownReference = (field: string, kind: string, id: string): ApiError =>
  validationError([{ path: `body.${field}`, message: `no ${kind} with id ${id} in this cabinet` }]);

/** A draft quote: no pricing, no event. Its client (and opportunity, if given) must be the cabinet's. */
export function createDevis(deps: Deps, cabinetId: string, input: CreateDevisInput): Devis {
  if (!clientExists(deps, cabinetId, input.client_id)) throw unknownReference('client_id', 'client', input.client_id);
  if (input.opportunity_id !== undefined && !opportunityExists(deps, cabinetId, input.opportunity_id)) {
    throw unknownReference('opportunity_id', 'opportunity', input.opportunity_id);
  }
  const now = deps.clock.now();
  const row: store.DevisRow = {
    id: timeOrderedUuid(now, deps.randomBytes),
    cabinetId,
    status: 'draft',
    clientId: input.client_id,
    opportunityId: input.opportunity_id ?? null,
    compagnie: input.compagnie,
    produit: input.produit,
    dicData: JSON.stringify(input.dicData),
    tarifCents: null,
    suspens: null,
    jobId: null,
    pdfSha256: null,
    offres: null,
    documents: null,
    contractId: null,
    signedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  deps.db.transaction(() => devisRecords.insert(deps, row));
  return toDevis(row);
}

export function findDevis(deps: Pick<Deps, 'db'>, cabinetId: string, id: string): Devis | null {
  const row = store.findDevis(deps.db.orm, cabinetId, id);
  return row ? toDevis(row) : null;
}

export function getDevis(deps: Deps, cabinetId: string, id: string): Devis {
  const quote = findDevis(deps, cabinetId, id);
  if (!quote) throw notFound(id);
  return quote;
}

/**
 * Records a successful pricing on the quote: premium, pending conditions, the PDF, the formulas
 * offered and the other documents, committed together. Called by the pricing engine inside its own
 * transaction (which also emits the events).
 */
export function recordDevisPriced(
  deps: Deps,
  cabinetId: string,
  id: string,
  result: { tarifEur: number; suspens?: string | null; pdf?: Buffer | null; jobId?: string | null } & PricedExtras,
): Devis {
  return atomically(deps.db, () => {
    const now = deps.clock.now();
    const pdfSha256 = result.pdf ? createHash('sha256').update(result.pdf).digest('hex') : undefined;
    const extras = extrasToStore(result);
    // Undefined leaves a column as it is: a pricing without a PDF keeps the quote's previous one.
    const changes: Partial<store.DevisRow> = {
      status: 'priced',
      tarifCents: Math.round(result.tarifEur * 100),
      suspens: result.suspens ?? null,
      jobId: result.jobId ?? undefined,
      pdfSha256,
      offres: extras.offres,
      documents: extras.documents,
      updatedAt: now,
    };
    // The quote as updated (RETURNING): every job's completion prices one, without reading it first.
    const row = devisRecords.update(deps, cabinetId, id, changes);
    if (!row) throw notFound(id);
    if (result.pdf && pdfSha256)
      store.upsertDocument(deps.db.orm, { devisId: id, cabinetId, pdf: result.pdf, sha256: pdfSha256, createdAt: now });
    // A quote is priced once by its job: there are previous files to replace only when files come.
    if (extras.files.length > 0) store.replaceAttachments(deps.db.orm, cabinetId, id, extras.files, now);
    return toDevis(row);
  });
}

/**
 * A quote's contract id, the same on every install: a quote has at most one contract, so installs
 * that sign it while offline make one record, not two that clash.
 */
function contractIdOf(devisId: string): string {
  return nameBasedUuid(`courtier:devis/${devisId}/contract`);
}

/**
 * Signs a priced quote. One transaction: the quote is signed, a contract is created, devis.signed
 * and contract.signed are emitted, and a linked opportunity that is still open is won.
 */
export function signDevis(deps: Deps, cabinetId: string, id: string, input: { signed_at?: string } | undefined): Devis {
  return deps.db.immediateTransaction(() => {
    const row = store.findDevis(deps.db.orm, cabinetId, id);
    if (!row) throw notFound(id);
    if (row.status !== 'priced' || row.tarifCents === null) {
      const why = row.status === 'signed' ? 'it is already signed' : `it is ${row.status}; only a priced quote can be signed`;
      throw new ApiError('invalid_devis_transition', `This quote cannot be signed: ${why}.`, { status: row.status });
    }
    if (row.clientId === null) {
      throw new ApiError(
        'invalid_devis_transition',
        'This quote has no client, so it cannot become a contract: price a draft quote made with POST /devis, or pass client_id to the tarification.',
        { status: row.status },
      );
    }
    const clientId = row.clientId;
    const now = deps.clock.now();
    const signedAt = input?.signed_at === undefined ? now : Date.parse(input.signed_at);
    const contract: store.ContractRow = {
      id: contractIdOf(id),
      cabinetId,
      devisId: id,
      clientId,
      opportunityId: row.opportunityId,
      compagnie: row.compagnie,
      produit: row.produit,
      premiumCents: row.tarifCents,
      signedAt,
      createdAt: now,
    };
    contractRecords.insert(deps, contract);
    const changes: Partial<store.DevisRow> = { status: 'signed', signedAt, contractId: contract.id, updatedAt: now };
    devisRecords.update(deps, cabinetId, id, changes);
    const signed = toDevis({ ...row, ...changes });
    const common = {
      devis_id: id,
      client_id: clientId,
      opportunity_id: row.opportunityId,
      compagnie: row.compagnie,
      produit: row.produit,
      signed_at: toIso(signedAt),
      contract_id: contract.id,
    };
    recordEvent(deps, cabinetId, 'devis.signed', { ...common, tarif_eur: euros(row.tarifCents) });
    recordEvent(deps, cabinetId, 'contract.signed', { ...common, premium_eur: euros(row.tarifCents) });
    if (row.opportunityId) winOpportunityIfOpen(deps, cabinetId, row.opportunityId);
    return signed;
  });
}

/** The PDF of a priced quote of this cabinet. */
export function readDevisPdf(deps: Deps, cabinetId: string, id: string): Buffer {
  return readDevisDocument(deps, cabinetId, id).pdf;
}

/**
 * The PDF of a priced quote of this cabinet (for a signed-in console user: no link needed), the
 * quote, and when the PDF was stored (its date in the file's name).
 */
export function readDevisDocument(deps: Deps, cabinetId: string, id: string): { pdf: Buffer; storedAt: number; devis: Devis } {
  const row = store.findDevis(deps.db.orm, cabinetId, id);
  if (!row) throw notFound(id);
  const document = row.pdfSha256 === null ? undefined : store.readDocumentWithDate(deps.db.orm, cabinetId, id);
  if (!document) throw new ApiError('pdf_not_available', `The quote ${id} has no PDF: it is ${row.status}, not priced.`);
  return { pdf: document.pdf, storedAt: document.createdAt, devis: toDevis(row) };
}

/** The opportunities the client's quotes are for. */
export function opportunityIdsOfClient(deps: Deps, cabinetId: string, clientId: string): string[] {
  return store.opportunityIdsOfClient(deps.db.orm, cabinetId, clientId);
}

/** A quote for a tarification: a new one, or the given draft, now being priced by the job. */
export function startDevisPricing(
  deps: Deps,
  cabinetId: string,
  input: { devisId?: string; clientId?: string; compagnie: string; produit: string; dicData: Record<string, unknown>; jobId: string },
): string {
  const now = deps.clock.now();
  if (input.devisId !== undefined) {
    const row = store.findDevis(deps.db.orm, cabinetId, input.devisId);
    if (!row) throw unknownReference('devis_id', 'quote', input.devisId);
    if (row.status !== 'draft' && row.status !== 'failed') {
      throw validationError([
        { path: 'body.devis_id', message: `this quote is ${row.status}; only a draft or failed quote can be priced` },
      ]);
    }
    if (row.compagnie !== input.compagnie || row.produit !== input.produit) {
      throw validationError([
        { path: 'body.devis_id', message: `this quote is for ${row.compagnie}/${row.produit}, not ${input.compagnie}/${input.produit}` },
      ]);
    }
    devisRecords.update(deps, cabinetId, input.devisId, {
      status: 'pricing',
      jobId: input.jobId,
      dicData: JSON.stringify(input.dicData),
      updatedAt: now,
    });
    return input.devisId;
  }
  if (input.clientId !== undefined && !clientExists(deps, cabinetId, input.clientId))
    throw unknownReference('client_id', 'client', input.clientId);
  const id = timeOrderedUuid(now, deps.randomBytes);
  devisRecords.insert(deps, {
    id,
    cabinetId,
    status: 'pricing',
    clientId: input.clientId ?? null,
    opportunityId: null,
    compagnie: input.compagnie,
    produit: input.produit,
    dicData: JSON.stringify(input.dicData),
    tarifCents: null,
    suspens: null,
    jobId: input.jobId,
    pdfSha256: null,
    contractId: null,
    signedAt: null,
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

/** Pricing did not happen (failed or cancelled job). */
export function recordDevisFailed(deps: Deps, cabinetId: string, id: string): Devis {
  const row = devisRecords.update(deps, cabinetId, id, { status: 'failed', updatedAt: deps.clock.now() });
  if (!row) throw notFound(id);
  return toDevis(row);
}

/** What a client's erasure reached among its quotes: the quotes, and the opportunities they name. */
export interface ErasedQuotes {
  devisIds: string[];
  opportunityIds: string[];
}

/**
 * A client's erasure reaches its quotes: each loses its dicData and the insurer's pending
 * conditions, and an unsigned one its PDF too; a signed quote (a contract was made of it) keeps its
 * PDF, the contract's proof (README, "Right to erasure"). What changed is queued for the other
 * installs as an edit, whose clock wins over every earlier value, and the creation responses kept
 * for Idempotency-Key replays lose the dicData. Inside the erasure's transaction.
 */
export function eraseQuotesOfClient(deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>, cabinetId: string, clientId: string): ErasedQuotes {
  const rows = store.devisOfClient(deps.db.orm, cabinetId, clientId);
  for (const row of rows) {
    const signed = row.status === 'signed' || row.contractId !== null || row.contracted;
    const erased: Partial<store.DevisRow> = { dicData: ERASED_RECORD_FIELDS.devis.dic_data, suspens: ERASED_RECORD_FIELDS.devis.suspens };
    if (!signed) {
      erased.pdfSha256 = null;
      erased.documents = null;
      store.deleteDocument(deps.db.orm, cabinetId, row.id);
      store.deleteAttachments(deps.db.orm, cabinetId, row.id);
    }
    const changes = Object.fromEntries(
      Object.entries(erased).filter(([column, value]) => row[column as keyof store.DevisRow] !== value),
    ) as Partial<store.DevisRow>;
    if (Object.keys(changes).length === 0) continue;
    devisRecords.update(deps, cabinetId, row.id, changes);
    rewriteStoredResponses(deps, cabinetId, row.id, (body) => ({
      ...body,
      dicData: {},
      suspens: null,
      ...(signed ? {} : { pdf_available: false, pdf_url: null, documents: [] }),
    }));
  }
  return {
    devisIds: rows.map((row) => row.id),
    opportunityIds: [...new Set(rows.flatMap((row) => (row.opportunityId === null ? [] : [row.opportunityId])))],
  };
}
