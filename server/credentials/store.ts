import type { Orm } from '../platform/db/open.js';
import { tableSql } from '../platform/db/table-sql.js';
import { insurerCredentials } from './schema.js';

export type CredentialRow = typeof insurerCredentials.$inferSelect;

/** Read by every enqueue (are credentials set?) and every job: prepared once (table-sql.ts). */
const CREDENTIAL = tableSql(insurerCredentials);

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
  return CREDENTIAL.get(orm, 'WHERE cabinet_id = ? AND compagnie = ?', cabinetId, compagnie);
}
