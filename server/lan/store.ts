import { eq } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { lanSettings } from './schema.js';

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
