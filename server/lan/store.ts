import { desc, eq, gt, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import { lanAddressBlocks, lanSettings } from './schema.js';

export type LanSettingsRow = typeof lanSettings.$inferSelect;

const ROW_ID = 1;

export function readLanSettings(orm: Orm): LanSettingsRow | undefined {
  return orm.select().from(lanSettings).where(eq(lanSettings.id, ROW_ID)).get();
}

export function saveLanSettings(orm: Orm, row: Omit<LanSettingsRow, 'id'>): void {
  orm
    .insert(lanSettings)
    .values({ ...row, id: ROW_ID })
    .onConflictDoUpdate({ target: lanSettings.id, set: row })
    .run();
}

export type AddressBlockRow = typeof lanAddressBlocks.$inferSelect;

/** Read on every LAN request: prepared once (prepared-query.ts). */
const BLOCKED_UNTIL = preparedQuery((orm) =>
  orm
    .select({ blockedUntil: lanAddressBlocks.blockedUntil })
    .from(lanAddressBlocks)
    .where(eq(lanAddressBlocks.address, sql.placeholder('address'))),
);

/** Until when an address is blocked (epoch ms), or undefined. */
export function addressBlockedUntil(orm: Orm, address: string): number | undefined {
  return BLOCKED_UNTIL(orm).get({ address })?.blockedUntil;
}

export function findAddressBlock(orm: Orm, address: string): AddressBlockRow | undefined {
  return orm.select().from(lanAddressBlocks).where(eq(lanAddressBlocks.address, address)).get();
}

export function saveAddressBlock(orm: Orm, row: AddressBlockRow): void {
  orm.insert(lanAddressBlocks).values(row).onConflictDoUpdate({ target: lanAddressBlocks.address, set: row }).run();
}

export function listAddressBlocks(orm: Orm, now: number): AddressBlockRow[] {
  return orm.select().from(lanAddressBlocks).where(gt(lanAddressBlocks.blockedUntil, now)).orderBy(desc(lanAddressBlocks.blockedAt)).all();
}

export function deleteAddressBlock(orm: Orm, address: string): boolean {
  return orm.delete(lanAddressBlocks).where(eq(lanAddressBlocks.address, address)).run().changes > 0;
}
