import { sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { CursorPosition } from '../http/cursor.js';

/**
 * Keyset condition for newest-first pages: rows strictly before the cursor's (created_at, id).
 * A row-value comparison, so that SQLite walks the (cabinet_id, created_at, id) index directly:
 * page 1,800 costs what page 1 costs.
 */
export function before(createdAt: AnySQLiteColumn, id: AnySQLiteColumn, position: CursorPosition | undefined): SQL | undefined {
  return position ? sql`(${createdAt}, ${id}) < (${position.createdAt}, ${position.id})` : undefined;
}

/**
 * The same condition for a query prepared once (prepared-query.ts): the position is given as the
 * placeholders `afterCreatedAt` and `afterId`.
 */
export function beforePlaceholders(createdAt: AnySQLiteColumn, id: AnySQLiteColumn): SQL {
  return sql`(${createdAt}, ${id}) < (${sql.placeholder('afterCreatedAt')}, ${sql.placeholder('afterId')})`;
}
