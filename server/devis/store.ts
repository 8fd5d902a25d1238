import { and, desc, eq, gt, inArray, isNotNull, sql, type SQL } from 'drizzle-orm';
import { before } from '../platform/db/keyset.js';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { contracts, devis, devisAttachments, devisDocuments } from './schema.js';

export type DevisRow = typeof devis.$inferSelect;
export type ContractRow = typeof contracts.$inferSelect;

const P = sql.placeholder;

/** Every tarification reads the quote it prices: prepared once (prepared-query.ts). */
const DEVIS = preparedQuery((orm) =>
  orm
    .select()
    .from(devis)
    .where(and(eq(devis.cabinetId, P('cabinetId')), eq(devis.id, P('id')))),
);

export function findDevis(orm: Orm, cabinetId: string, id: string): DevisRow | undefined {
  return DEVIS(orm).get({ cabinetId, id });
}

interface DevisFilters {
  status?: DevisRow['status'];
  clientId?: string;
  opportunityId?: string;
  createdAfter?: number;
}

function matching(cabinetId: string, filters: DevisFilters): SQL | undefined {
  return and(
    eq(devis.cabinetId, cabinetId),
    filters.status ? eq(devis.status, filters.status) : undefined,
    filters.clientId ? eq(devis.clientId, filters.clientId) : undefined,
    filters.opportunityId ? eq(devis.opportunityId, filters.opportunityId) : undefined,
    filters.createdAfter !== undefined ? gt(devis.createdAt, filters.createdAfter) : undefined,
  );
}

export function listDevis(orm: Orm, cabinetId: string, filters: DevisFilters & { after?: CursorPosition }, limit: number): DevisRow[] {
  return orm
    .select()
    .from(devis)
    .where(and(matching(cabinetId, filters), before(devis.createdAt, devis.id, filters.after)))
    .orderBy(desc(devis.createdAt), desc(devis.id))
    .limit(limit)
    .all();
}

/** The premium of every quote the filters keep, for a list sorted by premium. */
export function devisPremiumsMatching(orm: Orm, cabinetId: string, filters: DevisFilters): Pick<DevisRow, 'id' | 'tarifCents'>[] {
  return orm.select({ id: devis.id, tarifCents: devis.tarifCents }).from(devis).where(matching(cabinetId, filters)).all();
}

/** Some of the cabinet's quotes, by id (in no order). */
export function devisByIds(orm: Orm, cabinetId: string, ids: readonly string[]): DevisRow[] {
  if (ids.length === 0) return [];
  return orm
    .select()
    .from(devis)
    .where(and(eq(devis.cabinetId, cabinetId), inArray(devis.id, [...ids])))
    .all();
}

export function upsertDocument(orm: Orm, row: typeof devisDocuments.$inferInsert): void {
  orm
    .insert(devisDocuments)
    .values(row)
    .onConflictDoUpdate({ target: devisDocuments.devisId, set: { pdf: row.pdf, sha256: row.sha256, createdAt: row.createdAt } })
    .run();
}

/** The PDF and when it was stored (when the quote was priced). */
export function readDocumentWithDate(orm: Orm, cabinetId: string, devisId: string): { pdf: Buffer; createdAt: number } | undefined {
  return orm
    .select({ pdf: devisDocuments.pdf, createdAt: devisDocuments.createdAt })
    .from(devisDocuments)
    .where(and(eq(devisDocuments.cabinetId, cabinetId), eq(devisDocuments.devisId, devisId)))
    .get();
}

/** The opportunities a client's quotes name. */
export function opportunityIdsOfClient(orm: Orm, cabinetId: string, clientId: string): string[] {
  return orm
    .selectDistinct({ id: devis.opportunityId })
    .from(devis)
    .where(and(eq(devis.cabinetId, cabinetId), eq(devis.clientId, clientId), isNotNull(devis.opportunityId)))
    .all()
    .flatMap((row) => (row.id === null ? [] : [row.id]));
}

export function readDocument(orm: Orm, cabinetId: string, devisId: string): Buffer | undefined {
  return orm
    .select({ pdf: devisDocuments.pdf })
    .from(devisDocuments)
    .where(and(eq(devisDocuments.cabinetId, cabinetId), eq(devisDocuments.devisId, devisId)))
    .get()?.pdf;
}

/** Whether the quote has its PDF on this install (one priced elsewhere may lack it). */
export function hasDocument(orm: Orm, cabinetId: string, devisId: string): boolean {
  return (
    orm
      .select({ id: devisDocuments.devisId })
      .from(devisDocuments)
      .where(and(eq(devisDocuments.cabinetId, cabinetId), eq(devisDocuments.devisId, devisId)))
      .get() !== undefined
  );
}

/** A stored PDF by its content hash (the sync addresses PDFs that way). */
export function readDocumentBySha(orm: Orm, cabinetId: string, sha256: string): Buffer | undefined {
  return orm
    .select({ pdf: devisDocuments.pdf })
    .from(devisDocuments)
    .where(and(eq(devisDocuments.cabinetId, cabinetId), eq(devisDocuments.sha256, sha256)))
    .limit(1)
    .get()?.pdf;
}

/** Every quote of a client, with whether a contract was made of it. */
export function devisOfClient(orm: Orm, cabinetId: string, clientId: string): (DevisRow & { contracted: boolean })[] {
  return orm
    .select()
    .from(devis)
    .leftJoin(contracts, and(eq(contracts.cabinetId, cabinetId), eq(contracts.devisId, devis.id)))
    .where(and(eq(devis.cabinetId, cabinetId), eq(devis.clientId, clientId)))
    .all()
    .map((row) => ({ ...row.devis, contracted: row.contracts !== null }));
}

export function deleteDocument(orm: Orm, cabinetId: string, devisId: string): void {
  orm
    .delete(devisDocuments)
    .where(and(eq(devisDocuments.cabinetId, cabinetId), eq(devisDocuments.devisId, devisId)))
    .run();
}

/** Replaces a quote's other documents' files (a new pricing brings its own). */
export function replaceAttachments(
  orm: Orm,
  cabinetId: string,
  devisId: string,
  files: readonly { position: number; pdf: Buffer; sha256: string }[],
  createdAt: number,
): void {
  deleteAttachments(orm, cabinetId, devisId);
  for (const file of files)
    orm
      .insert(devisAttachments)
      .values({ devisId, cabinetId, createdAt, ...file })
      .run();
}

export function readAttachment(orm: Orm, cabinetId: string, devisId: string, position: number): Buffer | undefined {
  return orm
    .select({ pdf: devisAttachments.pdf })
    .from(devisAttachments)
    .where(and(eq(devisAttachments.cabinetId, cabinetId), eq(devisAttachments.devisId, devisId), eq(devisAttachments.position, position)))
    .get()?.pdf;
}

/** A stored document's file by its content hash, under any of the cabinet's quotes (sync). */
export function readAttachmentBySha(orm: Orm, cabinetId: string, sha256: string): Buffer | undefined {
  return orm
    .select({ pdf: devisAttachments.pdf })
    .from(devisAttachments)
    .where(and(eq(devisAttachments.cabinetId, cabinetId), eq(devisAttachments.sha256, sha256)))
    .limit(1)
    .get()?.pdf;
}

export function deleteAttachments(orm: Orm, cabinetId: string, devisId: string): void {
  orm
    .delete(devisAttachments)
    .where(and(eq(devisAttachments.cabinetId, cabinetId), eq(devisAttachments.devisId, devisId)))
    .run();
}
