import { eq } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { cabinets, users } from './schema.js';

export type CabinetRow = typeof cabinets.$inferSelect;
export type UserRow = typeof users.$inferSelect;

export function insertCabinet(orm: Orm, row: CabinetRow): void {
  orm.insert(cabinets).values(row).run();
}

export function insertUser(orm: Orm, row: UserRow): void {
  orm.insert(users).values(row).run();
}

export function findCabinet(orm: Orm, cabinetId: string): CabinetRow | undefined {
  return orm.select().from(cabinets).where(eq(cabinets.id, cabinetId)).get();
}

export function listCabinets(orm: Orm): CabinetRow[] {
  return orm.select().from(cabinets).orderBy(cabinets.createdAt).all();
}

export function findUserByEmail(orm: Orm, email: string): UserRow | undefined {
  return orm.select().from(users).where(eq(users.email, email)).get();
}

export function setLlmDataSharing(orm: Orm, cabinetId: string, enabled: boolean): boolean {
  return orm.update(cabinets).set({ llmDataSharing: enabled }).where(eq(cabinets.id, cabinetId)).run().changes > 0;
}

export function findUser(orm: Orm, userId: string): UserRow | undefined {
  return orm.select().from(users).where(eq(users.id, userId)).get();
}
