import { and, desc, eq, gt, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import { holdsText } from '../platform/db/like.js';
import { before, beforePlaceholders } from '../platform/db/keyset.js';
import type { Orm } from '../platform/db/open.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import { clients, opportunities } from './schema.js';

export type OpportunityRow = typeof opportunities.$inferSelect;
export type ClientRow = typeof clients.$inferSelect;

const P = sql.placeholder;

export function findOpportunity(orm: Orm, cabinetId: string, id: string): OpportunityRow | undefined {
  return orm
    .select()
    .from(opportunities)
    .where(and(eq(opportunities.cabinetId, cabinetId), eq(opportunities.id, id)))
    .get();
}

/** A page of opportunities, newest first; each set of filters is its own statement. */
const OPPORTUNITY_PAGE = preparedQuery((orm, byStage: boolean, byCreatedAfter: boolean, afterPosition: boolean) =>
  orm
    .select()
    .from(opportunities)
    .where(
      and(
        eq(opportunities.cabinetId, P('cabinetId')),
        byStage ? eq(opportunities.stage, P('stage')) : undefined,
        byCreatedAfter ? gt(opportunities.createdAt, P('createdAfter')) : undefined,
        afterPosition ? beforePlaceholders(opportunities.createdAt, opportunities.id) : undefined,
      ),
    )
    .orderBy(desc(opportunities.createdAt), desc(opportunities.id))
    .limit(P('limit')),
);

export function listOpportunities(
  orm: Orm,
  cabinetId: string,
  filters: { stage?: OpportunityRow['stage']; createdAfter?: number; after?: CursorPosition },
  limit: number,
): OpportunityRow[] {
  const { stage, createdAfter, after } = filters;
  return OPPORTUNITY_PAGE(orm, stage !== undefined, createdAfter !== undefined, after !== undefined).all({
    cabinetId,
    stage,
    createdAfter,
    afterCreatedAt: after?.createdAt,
    afterId: after?.id,
    limit,
  });
}

/** The expected value of every opportunity the filters keep, for a list sorted by value. */
export function opportunityValuesMatching(
  orm: Orm,
  cabinetId: string,
  filters: { stage?: OpportunityRow['stage']; createdAfter?: number },
): Pick<OpportunityRow, 'id' | 'expectedValueCents'>[] {
  return orm
    .select({ id: opportunities.id, expectedValueCents: opportunities.expectedValueCents })
    .from(opportunities)
    .where(
      and(
        eq(opportunities.cabinetId, cabinetId),
        filters.stage ? eq(opportunities.stage, filters.stage) : undefined,
        filters.createdAfter !== undefined ? gt(opportunities.createdAt, filters.createdAfter) : undefined,
      ),
    )
    .all();
}

/** Some of the cabinet's opportunities, by id (in no order). */
export function opportunitiesByIds(orm: Orm, cabinetId: string, ids: readonly string[]): OpportunityRow[] {
  if (ids.length === 0) return [];
  return orm
    .select()
    .from(opportunities)
    .where(and(eq(opportunities.cabinetId, cabinetId), inArray(opportunities.id, [...ids])))
    .all();
}

/** A client that has not been erased: an erased one is, for every reader, no longer there. */
export function findClient(orm: Orm, cabinetId: string, id: string): ClientRow | undefined {
  return orm
    .select()
    .from(clients)
    .where(and(eq(clients.cabinetId, cabinetId), eq(clients.id, id), isNull(clients.erasedAt)))
    .get();
}

/** When the client was erased: null while it is not, undefined when the cabinet has no such client. */
export function findErasure(orm: Orm, cabinetId: string, id: string): { erasedAt: number | null } | undefined {
  return orm
    .select({ erasedAt: clients.erasedAt })
    .from(clients)
    .where(and(eq(clients.cabinetId, cabinetId), eq(clients.id, id)))
    .get();
}

/** The columns that hold a client's personal data: everything but its id, cabinet, type and dates. */
type PersonalColumn = Exclude<keyof ClientRow, 'id' | 'cabinetId' | 'type' | 'createdAt' | 'updatedAt' | 'erasedAt'>;

/** Every personal column nulled: a column added to the table without being added here is a type error. */
const ERASED: { [K in PersonalColumn]: null } = {
  lastName: null,
  firstName: null,
  companyName: null,
  siret: null,
  email: null,
  phone: null,
  address: null,
  birthDate: null,
};

export type ClientChanges = Partial<Pick<ClientRow, PersonalColumn | 'updatedAt'>>;

/** What an erasure writes: every personal column nulled, the row marked erased. */
export function clientErasure(at: number): ClientChanges & { erasedAt: number } {
  return { ...ERASED, updatedAt: at, erasedAt: at };
}

export interface ClientFilters {
  type?: ClientRow['type'];
  text?: string;
  createdAfter?: number;
}

/** The cabinet's clients a list's filters keep; never an erased one: for every reader, it is no longer there. */
function matching(cabinetId: string, filters: ClientFilters): SQL | undefined {
  return and(
    eq(clients.cabinetId, cabinetId),
    isNull(clients.erasedAt),
    filters.type ? eq(clients.type, filters.type) : undefined,
    filters.text !== undefined ? containsText(filters.text) : undefined,
    filters.createdAfter !== undefined ? gt(clients.createdAt, filters.createdAfter) : undefined,
  );
}

export function listClients(orm: Orm, cabinetId: string, filters: ClientFilters & { after?: CursorPosition }, limit: number): ClientRow[] {
  return orm
    .select()
    .from(clients)
    .where(and(matching(cabinetId, filters), before(clients.createdAt, clients.id, filters.after)))
    .orderBy(desc(clients.createdAt), desc(clients.id))
    .limit(limit)
    .all();
}

/** The names of every client the filters keep, for a list sorted by name (sorted by the caller, as its language sorts). */
export function clientNamesMatching(
  orm: Orm,
  cabinetId: string,
  filters: ClientFilters,
): Pick<ClientRow, 'id' | 'type' | 'lastName' | 'firstName' | 'companyName'>[] {
  return orm
    .select({
      id: clients.id,
      type: clients.type,
      lastName: clients.lastName,
      firstName: clients.firstName,
      companyName: clients.companyName,
    })
    .from(clients)
    .where(matching(cabinetId, filters))
    .all();
}

/** Some of the cabinet's clients, by id (in no order). */
export function clientsByIds(orm: Orm, cabinetId: string, ids: readonly string[]): ClientRow[] {
  if (ids.length === 0) return [];
  return orm
    .select()
    .from(clients)
    .where(and(eq(clients.cabinetId, cabinetId), inArray(clients.id, [...ids])))
    .all();
}

/**
 * The text anywhere in a name or the email. SQLite's LIKE ignores ASCII case; % and _ typed by the
 * user are escaped, so they match themselves.
 */
function containsText(text: string): SQL | undefined {
  return or(...[clients.lastName, clients.firstName, clients.companyName, clients.email].map((column) => holdsText(column, text)));
}

/** The display names of some of the cabinet's clients (erased ones have none, and are left out). */
export function clientNames(
  orm: Orm,
  cabinetId: string,
  ids: readonly string[],
): Pick<ClientRow, 'id' | 'type' | 'lastName' | 'firstName' | 'companyName'>[] {
  if (ids.length === 0) return [];
  return orm
    .select({
      id: clients.id,
      type: clients.type,
      lastName: clients.lastName,
      firstName: clients.firstName,
      companyName: clients.companyName,
    })
    .from(clients)
    .where(and(eq(clients.cabinetId, cabinetId), inArray(clients.id, [...ids]), isNull(clients.erasedAt)))
    .all();
}

/**
 * Opportunities tied to a client: those for the client (client_id), those its quotes name, and
 * those whose contact has its email (case-insensitive) or its SIRET. Newest first, at most `limit`.
 */
export function opportunitiesOfClient(
  orm: Orm,
  cabinetId: string,
  link: { clientId: string; ids: readonly string[]; email: string | null; siret: string | null },
  limit: number,
): OpportunityRow[] {
  const ties = [
    eq(opportunities.clientId, link.clientId),
    link.ids.length > 0 ? inArray(opportunities.id, [...link.ids]) : undefined,
    link.email !== null ? sql`lower(json_extract(${opportunities.contact}, '$.email')) = ${link.email.toLowerCase()}` : undefined,
    link.siret !== null ? sql`json_extract(${opportunities.contact}, '$.siret') = ${link.siret}` : undefined,
  ].filter((tie) => tie !== undefined);
  return orm
    .select()
    .from(opportunities)
    .where(and(eq(opportunities.cabinetId, cabinetId), or(...ties)))
    .orderBy(desc(opportunities.createdAt), desc(opportunities.id))
    .limit(limit)
    .all();
}

/** The ids of the opportunities for this client, or whose contact has its email (case-insensitive) or SIRET: every one, for an erasure. */
export function opportunityIdsTiedToClient(
  orm: Orm,
  cabinetId: string,
  client: { id: string; email: string | null; siret: string | null },
): string[] {
  const ties = [
    eq(opportunities.clientId, client.id),
    client.email !== null ? sql`lower(json_extract(${opportunities.contact}, '$.email')) = ${client.email.toLowerCase()}` : undefined,
    client.siret !== null ? sql`json_extract(${opportunities.contact}, '$.siret') = ${client.siret}` : undefined,
  ].filter((tie) => tie !== undefined);
  return orm
    .select({ id: opportunities.id })
    .from(opportunities)
    .where(and(eq(opportunities.cabinetId, cabinetId), or(...ties)))
    .all()
    .map((row) => row.id);
}

/** Some of the cabinet's opportunities, by id, with their contact. */
export function opportunityContacts(orm: Orm, cabinetId: string, ids: readonly string[]): Pick<OpportunityRow, 'id' | 'contact'>[] {
  if (ids.length === 0) return [];
  return orm
    .select({ id: opportunities.id, contact: opportunities.contact })
    .from(opportunities)
    .where(and(eq(opportunities.cabinetId, cabinetId), inArray(opportunities.id, [...ids])))
    .all();
}

/** What tells one client from another for an import: the email, SIRET and identity of every client of the cabinet not erased. */
export function clientIdentities(
  orm: Orm,
  cabinetId: string,
): Pick<ClientRow, 'type' | 'email' | 'siret' | 'lastName' | 'firstName' | 'birthDate'>[] {
  return orm
    .select({
      type: clients.type,
      email: clients.email,
      siret: clients.siret,
      lastName: clients.lastName,
      firstName: clients.firstName,
      birthDate: clients.birthDate,
    })
    .from(clients)
    .where(and(eq(clients.cabinetId, cabinetId), isNull(clients.erasedAt)))
    .all();
}
