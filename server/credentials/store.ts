import { and, eq, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import { insurerCredentials } from './schema.js';

export type CredentialRow = typeof insurerCredentials.$inferSelect;

const P = sql.placeholder;

/** Read by every enqueue (are credentials set?) and every job: prepared once (prepared-query.ts). */
const CREDENTIAL = preparedQuery((orm) =>
  orm
    .select()
    .from(insurerCredentials)
    .where(and(eq(insurerCredentials.cabinetId, P('cabinetId')), eq(insurerCredentials.compagnie, P('compagnie')))),
);

export function upsertCredential(orm: Orm, row: CredentialRow): void {
  orm
    .insert(insurerCredentials)
    .values(row)
    .onConflictDoUpdate({
      target: [insurerCredentials.cabinetId, insurerCredentials.compagnie],
      set: { login: row.login, extra: row.extra, updatedAt: row.updatedAt },
    })
    .run();
}

export function findCredential(orm: Orm, cabinetId: string, compagnie: string): CredentialRow | undefined {
  return CREDENTIAL(orm).get({ cabinetId, compagnie });
}
