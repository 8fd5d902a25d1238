import { and, desc, eq, gt } from 'drizzle-orm';
import { before } from '../db/keyset.js';
import type { Orm } from '../db/open.js';
import type { CursorPosition } from '../http/cursor.js';
import { clients, opportunities } from './schema.js';

export type OpportunityRow = typeof opportunities.$inferSelect;
export type ClientRow = typeof clients.$inferSelect;

export function insertOpportunity(orm: Orm, row: OpportunityRow): void {
  orm.insert(opportunities).values(row).run();
}

export function findOpportunity(orm: Orm, cabinetId: string, id: string): OpportunityRow | undefined {
  return orm.select().from(opportunities).where(and(eq(opportunities.cabinetId, cabinetId), eq(opportunities.id, id))).get();
}

export function updateOpportunity(orm: Orm, cabinetId: string, id: string, changes: Partial<OpportunityRow>): void {
  orm.update(opportunities).set(changes).where(and(eq(opportunities.cabinetId, cabinetId), eq(opportunities.id, id))).run();
}

export function listOpportunities(
  orm: Orm,
  cabinetId: string,
  filters: { stage?: OpportunityRow['stage']; createdAfter?: number; after?: CursorPosition },
  limit: number,
): OpportunityRow[] {
  return orm
    .select()
    .from(opportunities)
    .where(
      and(
        eq(opportunities.cabinetId, cabinetId),
        filters.stage ? eq(opportunities.stage, filters.stage) : undefined,
        filters.createdAfter !== undefined ? gt(opportunities.createdAt, filters.createdAfter) : undefined,
        before(opportunities.createdAt, opportunities.id, filters.after),
      ),
    )
    .orderBy(desc(opportunities.createdAt), desc(opportunities.id))
    .limit(limit)
    .all();
}

export function insertClient(orm: Orm, row: ClientRow): void {
  orm.insert(clients).values(row).run();
}

export function findClient(orm: Orm, cabinetId: string, id: string): ClientRow | undefined {
  return orm.select().from(clients).where(and(eq(clients.cabinetId, cabinetId), eq(clients.id, id))).get();
}

export function listClients(
  orm: Orm,
  cabinetId: string,
  filters: { type?: ClientRow['type']; createdAfter?: number; after?: CursorPosition },
  limit: number,
): ClientRow[] {
  return orm
    .select()
    .from(clients)
    .where(
      and(
        eq(clients.cabinetId, cabinetId),
        filters.type ? eq(clients.type, filters.type) : undefined,
        filters.createdAfter !== undefined ? gt(clients.createdAt, filters.createdAfter) : undefined,
        before(clients.createdAt, clients.id, filters.after),
      ),
    )
    .orderBy(desc(clients.createdAt), desc(clients.id))
    .limit(limit)
    .all();
}
