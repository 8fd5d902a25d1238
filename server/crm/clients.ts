import { randomUUID } from 'node:crypto';
import {
  CLIENT_CONTACT_FIELDS,
  clientTypeProblems,
  type Client,
  type ClientContactField,
  type ClientSort,
  type ClientErasure,
  type CreateClientInput,
  type UpdateClientInput,
} from '../../shared/crm.js';
import type { Page } from '../../shared/pagination.js';
import type { Deps } from '../deps.js';
import { atomically } from '../platform/db/atomically.js';
import { toIso } from '../platform/iso-time.js';
import { recordEvent } from '../events/service.js';
import { listPage, type OwnOrder } from '../platform/http/cursor.js';
import { validationError } from '../platform/http/validation.js';
import { rewriteStoredResponses } from '../idempotency/service.js';
import { clearClientCopies, NO_CONTACT } from './erasure.js';
import { notFound } from './service.js';
import * as store from './store.js';
import { clientRecords } from './sync.js';

/** The cabinet's clients: creation, reads, contact changes and the right to erasure. */

function toClient(row: store.ClientRow): Client {
  return {
    id: row.id,
    client_id: row.id,
    type: row.type,
    last_name: row.lastName,
    first_name: row.firstName,
    company_name: row.companyName,
    siret: row.siret,
    email: row.email,
    phone: row.phone,
    address: row.address === null ? null : (JSON.parse(row.address) as Client['address']),
    birth_date: row.birthDate,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

function newClientRow(cabinetId: string, input: CreateClientInput, now: number): store.ClientRow {
  return {
    id: randomUUID(),
    cabinetId,
    type: input.type,
    lastName: input.last_name ?? null,
    firstName: input.first_name ?? null,
    companyName: input.company_name ?? null,
    siret: input.siret ?? null,
    email: input.email ?? null,
    phone: input.phone ?? null,
    address: input.address ? JSON.stringify({ line2: null, ...input.address }) : null,
    birthDate: input.birth_date ?? null,
    createdAt: now,
    updatedAt: now,
    erasedAt: null,
  };
}

export function createClient(deps: Deps, cabinetId: string, input: CreateClientInput): Client {
  const row = newClientRow(cabinetId, input, deps.clock.now());
  deps.db.transaction(() => {
    clientRecords.insert(deps, row);
  });
  return toClient(row);
}

/**
 * Creates many clients all or nothing (an import): inside the caller's transaction when one is
 * open, else in one of its own; each is captured for the sync as a single creation is.
 */
export function createClients(deps: Deps, cabinetId: string, inputs: readonly CreateClientInput[]): Client[] {
  const now = deps.clock.now();
  const rows = inputs.map((input) => newClientRow(cabinetId, input, now));
  atomically(deps.db, () => {
    for (const row of rows) clientRecords.insert(deps, row);
  });
  return rows.map(toClient);
}

export function getClient(deps: Deps, cabinetId: string, id: string): Client {
  const row = store.findClient(deps.db.orm, cabinetId, id);
  if (!row) throw notFound('client', id);
  return toClient(row);
}

export function clientExists(deps: Deps, cabinetId: string, id: string): boolean {
  return store.findClient(deps.db.orm, cabinetId, id) !== undefined;
}

interface ClientListQuery {
  limit: number;
  cursor?: string;
  type?: Client['type'];
  q?: string;
  created_after?: string;
  sort?: ClientSort;
}

export function listClients(deps: Deps, cabinetId: string, query: ClientListQuery): Page<Client> {
  const filters = {
    type: query.type,
    text: query.q,
    createdAfter: query.created_after === undefined ? undefined : Date.parse(query.created_after),
  };
  const orm = deps.db.orm;
  const byName: OwnOrder<Client> = {
    name: 'name',
    keys: () => store.clientNamesMatching(orm, cabinetId, filters).map((row) => ({ key: sortName(row), id: row.id })),
    compare: (a, b) => FRENCH.compare(String(a), String(b)),
    read: (ids) => new Map(store.clientsByIds(orm, cabinetId, ids).map((row) => [row.id, toClient(row)])),
  };
  return listPage(
    deps.keys.cursor,
    { cabinetId, resource: 'clients', filters: { type: query.type, q: query.q, created_after: query.created_after } },
    query,
    { read: (after, limit) => store.listClients(orm, cabinetId, { ...filters, after }, limit), toItem: toClient },
    query.sort === 'name' ? byName : undefined,
  );
}

/** French order: accents and case second (Émile between Dupont and Fabre), digits by value. */
const FRENCH = new Intl.Collator('fr', { sensitivity: 'base', numeric: true });

/** The name a list sorted by name orders by: a company's name, a person's last then first name. */
function sortName(row: Pick<store.ClientRow, 'type' | 'lastName' | 'firstName' | 'companyName'>): string {
  if (row.type === 'company' && row.companyName) return row.companyName;
  return [row.lastName, row.firstName].filter((part) => part).join(' ') || (row.companyName ?? '');
}

/** How a client is named to a person: a company by its name, a person by first and last name. */
function displayName(row: Pick<store.ClientRow, 'type' | 'lastName' | 'firstName' | 'companyName'>): string {
  if (row.type === 'company' && row.companyName) return row.companyName;
  return [row.firstName, row.lastName].filter((part) => part).join(' ') || (row.companyName ?? '');
}

/** The short name that files are named after: a company's name, a person's last name. */
function fileName(row: Pick<store.ClientRow, 'type' | 'lastName' | 'companyName'>): string {
  return (row.type === 'company' ? row.companyName : row.lastName) ?? row.lastName ?? row.companyName ?? '';
}

/** The names of some of the cabinet's clients, by id; an erased or unknown client is absent. */
export function clientNames(deps: Deps, cabinetId: string, ids: readonly string[]): Map<string, { name: string; short: string }> {
  const rows = store.clientNames(deps.db.orm, cabinetId, [...new Set(ids)]);
  return new Map(rows.map((row) => [row.id, { name: displayName(row), short: fileName(row) }]));
}

type ClientContact = Pick<Client, ClientContactField>;
type Address = NonNullable<Client['address']>;

/** The stored column of each contact field. */
const COLUMN = {
  last_name: 'lastName',
  first_name: 'firstName',
  company_name: 'companyName',
  siret: 'siret',
  email: 'email',
  phone: 'phone',
  address: 'address',
  birth_date: 'birthDate',
} as const satisfies Record<ClientContactField, keyof store.ClientChanges>;

/** One key order and an explicit line2, so that equal addresses compare and store equal. */
function normalizedAddress(address: Omit<Address, 'line2'> & { line2?: string | null }): Address {
  return { line1: address.line1, line2: address.line2 ?? null, postcode: address.postcode, city: address.city, country: address.country };
}

function contactOf(client: Client): ClientContact {
  return {
    last_name: client.last_name,
    first_name: client.first_name,
    company_name: client.company_name,
    siret: client.siret,
    email: client.email,
    phone: client.phone,
    address: client.address && normalizedAddress(client.address),
    birth_date: client.birth_date,
  };
}

/** The contact a PATCH leaves: a field given replaces the current one (null clears it), the others stay. */
function applyPatch(current: ClientContact, patch: UpdateClientInput): ClientContact {
  const given = <K extends ClientContactField>(field: K, value: ClientContact[K] | undefined): ClientContact[K] =>
    value === undefined ? current[field] : value;
  return {
    last_name: given('last_name', patch.last_name),
    first_name: given('first_name', patch.first_name),
    company_name: given('company_name', patch.company_name),
    siret: given('siret', patch.siret),
    email: given('email', patch.email),
    phone: given('phone', patch.phone),
    address: given('address', patch.address && normalizedAddress(patch.address)),
    birth_date: given('birth_date', patch.birth_date),
  };
}

/** The rules of the client's type, as at creation, on the client the change would leave. */
function checkClientType(type: Client['type'], contact: ClientContact): void {
  const problems = clientTypeProblems({ type, ...contact });
  if (problems.length > 0) throw validationError(problems.map(({ field, message }) => ({ path: `body.${field}`, message })));
}

function columnValue(contact: ClientContact, field: ClientContactField): string | null {
  const value = contact[field];
  return value !== null && typeof value === 'object' ? JSON.stringify(value) : value;
}

/**
 * Changes a client's contact fields and emits client.updated, in one transaction. A change that
 * changes no value writes nothing and emits nothing, so a retried PATCH is not a second event.
 */
export function updateClient(deps: Deps, cabinetId: string, id: string, patch: UpdateClientInput): Client {
  return deps.db.immediateTransaction(() => {
    const row = store.findClient(deps.db.orm, cabinetId, id);
    if (!row) throw notFound('client', id);
    const current = toClient(row);
    const before = contactOf(current);
    const after = applyPatch(before, patch);
    checkClientType(current.type, after);
    const changed = CLIENT_CONTACT_FIELDS.filter((field) => columnValue(before, field) !== columnValue(after, field));
    if (changed.length === 0) return current;
    const changes: store.ClientChanges = { updatedAt: deps.clock.now() };
    for (const field of changed) changes[COLUMN[field]] = columnValue(after, field);
    clientRecords.update(deps, cabinetId, id, changes);
    const updated = toClient({ ...row, ...changes });
    recordEvent(deps, cabinetId, 'client.updated', { ...updated, changed_fields: changed });
    return updated;
  });
}

/**
 * What an erasure of this client must find elsewhere before it nulls the client (its email and
 * SIRET tie opportunities to it); undefined when the cabinet has no such client or it is erased already.
 */
export function clientToErase(
  deps: Pick<Deps, 'db'>,
  cabinetId: string,
  id: string,
): { id: string; email: string | null; siret: string | null } | undefined {
  const row = store.findClient(deps.db.orm, cabinetId, id);
  return row && { id: row.id, email: row.email, siret: row.siret };
}

/** Whether the cabinet has this client, erased. */
export function clientErased(deps: Pick<Deps, 'db'>, cabinetId: string, id: string): boolean {
  return (store.findErasure(deps.db.orm, cabinetId, id)?.erasedAt ?? null) !== null;
}

/**
 * Right to erasure, the client's own part (server/erasure/service.ts erases the records that name
 * it first, in the same transaction): nulls every personal field of the client (the row stays,
 * without them, for the quotes and contracts that reference its id), clears the personal data of
 * its earlier client.updated events and of its stored creation responses, and emits
 * client.erased, in one transaction. Erasing an erased client changes nothing and answers the
 * first erasure.
 */
export function eraseClientRecord(deps: Deps, cabinetId: string, id: string): ClientErasure {
  return deps.db.immediateTransaction(() => {
    const found = store.findErasure(deps.db.orm, cabinetId, id);
    if (!found) throw notFound('client', id);
    if (found.erasedAt !== null) return { client_id: id, erased_at: toIso(found.erasedAt) };
    const now = deps.clock.now();
    // The tombstone travels whole: an install that never had the client can still hold it.
    clientRecords.erase(deps, cabinetId, id, store.clientErasure(now));
    // Copies of the personal data this service keeps elsewhere go too: earlier events, and
    // creations stored for Idempotency-Key replays (a replay answers the erased client).
    clearClientCopies(deps, cabinetId, id);
    rewriteStoredResponses(deps, cabinetId, id, (body) => ({ ...body, ...NO_CONTACT }));
    const erasure = { client_id: id, erased_at: toIso(now) };
    recordEvent(deps, cabinetId, 'client.erased', erasure);
    return erasure;
  });
}
