import { and, eq, isNull } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { consoleSessions } from './schema.js';

export type SessionRow = typeof consoleSessions.$inferSelect;

export function insertSession(orm: Orm, row: SessionRow): void {
  orm.insert(consoleSessions).values(row).run();
}

export function findSessionByHash(orm: Orm, tokenHash: string): SessionRow | undefined {
  return orm.select().from(consoleSessions).where(eq(consoleSessions.tokenHash, tokenHash)).get();
}

export function revokeSession(orm: Orm, sessionId: string, at: number): void {
  orm
    .update(consoleSessions)
    .set({ revokedAt: at })
    .where(and(eq(consoleSessions.id, sessionId), isNull(consoleSessions.revokedAt)))
    .run();
}
