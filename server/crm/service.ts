import { ERASED_RECORD_FIELDS } from '../../shared/erasure.js';
import {
  FINAL_STAGES,
  type CreateOpportunityInput,
  type Opportunity,
  type OpportunitySort,
  type OpportunityStage,
  type UpdateOpportunityInput,
} from '../../shared/crm.js';
import type { Page } from '../../shared/pagination.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { validationError } from '../platform/http/validation.js';
import { recordEvent } from '../events/service.js';
import { listPage, type OwnOrder } from '../platform/http/cursor.js';
import { rewriteStoredResponses } from '../idempotency/service.js';
import * as store from './store.js';
import * as searchStore from './store-search.js';
import { opportunityRecords } from './sync.js';

type CreatedVia = Opportunity['created_via'];
type Contact = Opportunity['contact'];

const euros = (cents: number) => cents / 100;
const cents = (eur: number) => Math.round(eur * 100);

function toOpportunity(row: store.OpportunityRow): Opportunity {
  const value = euros(row.expectedValueCents);
  return {
    id: row.id,
    opportunity_id: row.id,
    title: row.title,
    name: row.title,
    product: row.product,
    stage: row.stage,
    expected_value_eur: value,
    amount: value,
    source: row.source,
    contact: JSON.parse(row.contact) as Contact,
    tags: JSON.parse(row.tags) as string[],
    client_id: row.clientId,
    created_via: row.createdVia,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

function toContact(input: Partial<Contact> & { last_name: string }): Contact {
  return {
    last_name: input.last_name,
    first_name: input.first_name ?? null,
    company_name: input.company_name ?? null,
    siret: input.siret ?? null,
    email: input.email ?? null,
    phone: input.phone ?? null,
  };
}

export function notFound(kind: string, id: string): ApiError {
  return new ApiError('not_found', `No ${kind} with id ${id} in this cabinet.`);
}

/** An opportunity's client must be one of the cabinet's, not erased: another cabinet's is as unknown as no client. */
function checkClient(deps: Deps, cabinetId: string, clientId: string | null | undefined): void {
  if (clientId === null || clientId === undefined || store.findClient(deps.db.orm, cabinetId, clientId)) return;
  throw validationError([{ path: 'body.client_id', message: `no client with id ${clientId} in this cabinet (or it was erased)` }]);
}

/** Writes the opportunity and its opportunity.created event in one transaction. */
export function createOpportunity(deps: Deps, cabinetId: string, input: CreateOpportunityInput, via: CreatedVia): Opportunity {
  checkClient(deps, cabinetId, input.client_id);
  const now = deps.clock.now();
  const row: store.OpportunityRow = {
    id: timeOrderedUuid(now, deps.randomBytes),
    cabinetId,
    title: input.title,
    product: input.product,
    stage: input.stage,
    expectedValueCents: cents(input.expected_value_eur),
    source: input.source ?? via,
    contact: JSON.stringify(toContact(input.contact)),
    tags: JSON.stringify(input.tags),
    clientId: input.client_id ?? null,
    createdVia: via,
    createdAt: now,
    updatedAt: now,
  };
  const opportunity = toOpportunity(row);
  deps.db.transaction(() => {
    opportunityRecords.insert(deps, row);
    recordEvent(deps, cabinetId, 'opportunity.created', {
      opportunity_id: opportunity.opportunity_id,
      title: opportunity.title,
      stage: opportunity.stage,
      expected_value_eur: opportunity.expected_value_eur,
      source: opportunity.source,
      contact: {
        last_name: opportunity.contact.last_name,
        company_name: opportunity.contact.company_name,
        siret: opportunity.contact.siret,
      },
      tags: opportunity.tags,
      client_id: opportunity.client_id,
      created_via: opportunity.created_via,
    });
  });
  return opportunity;
}

export function getOpportunity(deps: Deps, cabinetId: string, id: string): Opportunity {
  const row = store.findOpportunity(deps.db.orm, cabinetId, id);
  if (!row) throw notFound('opportunity', id);
  return toOpportunity(row);
}

export function opportunityExists(deps: Deps, cabinetId: string, id: string): boolean {
  return store.findOpportunity(deps.db.orm, cabinetId, id) !== undefined;
}

export function listOpportunities(
  deps: Deps,
  cabinetId: string,
  query: { limit: number; cursor?: string; stage?: OpportunityStage; created_after?: string; sort?: OpportunitySort },
): Page<Opportunity> {
  const filters = { stage: query.stage, createdAfter: query.created_after === undefined ? undefined : Date.parse(query.created_after) };
  const orm = deps.db.orm;
  const byValue: OwnOrder<Opportunity> = {
    name: '-expected_value_eur',
    keys: () => store.opportunityValuesMatching(orm, cabinetId, filters).map((row) => ({ key: -row.expectedValueCents, id: row.id })),
    compare: (a, b) => Number(a) - Number(b),
    read: (ids) => new Map(store.opportunitiesByIds(orm, cabinetId, ids).map((row) => [row.id, toOpportunity(row)])),
  };
  return listPage(
    deps.keys.cursor,
    { cabinetId, resource: 'opportunities', filters: { stage: query.stage, created_after: query.created_after } },
    query,
    { read: (after, limit) => store.listOpportunities(orm, cabinetId, { ...filters, after }, limit), toItem: toOpportunity },
    query.sort === '-expected_value_eur' ? byValue : undefined,
  );
}

/** Opportunities whose title or contact holds the text, newest first (the console's search). */
export function searchOpportunities(deps: Deps, cabinetId: string, text: string, limit: number): Opportunity[] {
  return searchStore.searchOpportunities(deps.db.orm, cabinetId, text, limit).map(toOpportunity);
}

/** Open stages move freely among themselves and to won or lost; won and lost are final unless reopened. */
function checkStageMove(from: OpportunityStage, to: OpportunityStage, reopen: boolean): void {
  if (from === to) return;
  if (FINAL_STAGES.includes(from) && !reopen) {
    throw new ApiError(
      'invalid_stage_transition',
      `The opportunity is ${from}, which is final: it cannot move to ${to} unless you send "reopen": true.`,
      { from, to },
    );
  }
}

function recordStageEvents(deps: Deps, cabinetId: string, before: Opportunity, after: Opportunity): void {
  const payload = {
    opportunity_id: after.opportunity_id,
    title: after.title,
    previous_stage: before.stage,
    stage: after.stage,
    expected_value_eur: after.expected_value_eur,
    changed_at: after.updated_at,
  };
  recordEvent(deps, cabinetId, 'opportunity.stage_changed', payload);
  if (after.stage === 'won') recordEvent(deps, cabinetId, 'opportunity.won', payload);
  if (after.stage === 'lost') recordEvent(deps, cabinetId, 'opportunity.lost', payload);
}

/** Applies a change; a stage change emits its events in the same transaction. */
export function updateOpportunity(deps: Deps, cabinetId: string, id: string, patch: UpdateOpportunityInput): Opportunity {
  return deps.db.immediateTransaction(() => {
    const row = store.findOpportunity(deps.db.orm, cabinetId, id);
    if (!row) throw notFound('opportunity', id);
    const previous = toOpportunity(row);
    if (patch.stage !== undefined) checkStageMove(previous.stage, patch.stage, patch.reopen === true);
    checkClient(deps, cabinetId, patch.client_id);
    const changes: Partial<store.OpportunityRow> = { updatedAt: deps.clock.now() };
    if (patch.title !== undefined) changes.title = patch.title;
    if (patch.product !== undefined) changes.product = patch.product;
    if (patch.stage !== undefined) changes.stage = patch.stage;
    if (patch.expected_value_eur !== undefined) changes.expectedValueCents = cents(patch.expected_value_eur);
    if (patch.source !== undefined) changes.source = patch.source;
    if (patch.tags !== undefined) changes.tags = JSON.stringify(patch.tags);
    if (patch.client_id !== undefined) changes.clientId = patch.client_id;
    if (patch.contact !== undefined) changes.contact = JSON.stringify(toContact({ ...previous.contact, ...patch.contact }));
    opportunityRecords.update(deps, cabinetId, id, changes);
    const updated = toOpportunity({ ...row, ...changes });
    if (updated.stage !== previous.stage) recordStageEvents(deps, cabinetId, previous, updated);
    return updated;
  });
}

/** A signed quote wins its opportunity, if that is still open. Runs inside the caller's transaction. */
export function winOpportunityIfOpen(deps: Deps, cabinetId: string, id: string): void {
  const row = store.findOpportunity(deps.db.orm, cabinetId, id);
  if (!row || FINAL_STAGES.includes(row.stage)) return;
  const previous = toOpportunity(row);
  const changes = { stage: 'won' as const, updatedAt: deps.clock.now() };
  opportunityRecords.update(deps, cabinetId, id, changes);
  recordStageEvents(deps, cabinetId, previous, toOpportunity({ ...row, ...changes }));
}

/** At most this many opportunities are shown with a client (more would be a list to page through). */
const CLIENT_OPPORTUNITIES_MAX = 100;

/**
 * The opportunities of a client: those whose client_id is the client, those one of its quotes
 * names, and those whose contact has the client's email or SIRET (made before a client was chosen).
 */
export function listOpportunitiesOfClient(
  deps: Deps,
  cabinetId: string,
  client: { client_id: string; email: string | null; siret: string | null },
  quotedIds: readonly string[],
): Opportunity[] {
  const link = { clientId: client.client_id, ids: [...new Set(quotedIds)], email: client.email, siret: client.siret };
  return store.opportunitiesOfClient(deps.db.orm, cabinetId, link, CLIENT_OPPORTUNITIES_MAX).map(toOpportunity);
}

/** The opportunities for this client (client_id), or whose contact has its email or SIRET: those its erasure reaches. */
export function opportunityIdsTiedToClient(
  deps: Pick<Deps, 'db'>,
  cabinetId: string,
  client: { id: string; email: string | null; siret: string | null },
): string[] {
  return store.opportunityIdsTiedToClient(deps.db.orm, cabinetId, client);
}

/**
 * A client's erasure reaches these opportunities: their contact is emptied, queued for the other
 * installs as an edit (its clock wins over every earlier contact), and taken out of the creation
 * responses kept for Idempotency-Key replays. One already emptied is left as it is. Inside the
 * erasure's transaction. Returns the ids of those the cabinet has.
 */
export function eraseOpportunityContacts(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>,
  cabinetId: string,
  ids: readonly string[],
): string[] {
  const erased = ERASED_RECORD_FIELDS.opportunity.contact;
  const rows = store.opportunityContacts(deps.db.orm, cabinetId, [...new Set(ids)]);
  for (const row of rows) {
    if (row.contact === erased) continue;
    opportunityRecords.update(deps, cabinetId, row.id, { contact: erased });
    rewriteStoredResponses(deps, cabinetId, row.id, (body) => ({ ...body, contact: JSON.parse(erased) as Contact }));
  }
  return rows.map((row) => row.id);
}
