import { and, eq } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { insurerCredentials } from './schema.js';

export type CredentialRow = typeof insurerCredentials.$inferSelect;

export function upsertCredential(orm: Orm, row: CredentialRow): void {
  orm
    .insert(insurerCredentials)
    .values(row)
    .onConflictDoUpdate({ target: [insurerCredentials.cabinetId, insurerCredentials.compagnie], set: { login: row.login, extra: row.extra, updatedAt: row.updatedAt } })
    .run();
}

export function findCredential(orm: Orm, cabinetId: string, compagnie: string): CredentialRow | undefined {
  return orm
    .select()
    .from(insurerCredentials)
    .where(and(eq(insurerCredentials.cabinetId, cabinetId), eq(insurerCredentials.compagnie, compagnie)))
    .get();
}
