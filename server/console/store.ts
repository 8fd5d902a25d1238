import { and, eq, isNull, ne } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
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

/** Ends every live session of a user, but `exceptId` (the one that changed its own password). */
export function revokeSessionsOfUser(orm: Orm, userId: string, at: number, exceptId?: string): number {
  const others = exceptId === undefined ? undefined : ne(consoleSessions.id, exceptId);
  return orm
    .update(consoleSessions)
    .set({ revokedAt: at })
    .where(and(eq(consoleSessions.userId, userId), isNull(consoleSessions.revokedAt), others))
    .run().changes;
}

export function deleteSessionsOfUser(orm: Orm, userId: string): void {
  orm.delete(consoleSessions).where(eq(consoleSessions.userId, userId)).run();
}
