import { and, desc, eq, or, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import type { OpportunityRow } from './store.js';
import { opportunities } from './schema.js';

/**
 * Opportunities whose title or contact's names, company or email hold the text (SQLite's LIKE
 * ignores ASCII case; % and _ typed by the user match themselves), newest first.
 */
export function searchOpportunities(orm: Orm, cabinetId: string, text: string, limit: number): OpportunityRow[] {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const contactField = (field: string) => sql`json_extract(${opportunities.contact}, ${`$.${field}`}) LIKE ${pattern} ESCAPE '\\'`;
  return orm
    .select()
    .from(opportunities)
    .where(
      and(
        eq(opportunities.cabinetId, cabinetId),
        or(
          sql`${opportunities.title} LIKE ${pattern} ESCAPE '\\'`,
          contactField('last_name'),
          contactField('first_name'),
          contactField('company_name'),
          contactField('email'),
        ),
      ),
    )
    .orderBy(desc(opportunities.createdAt), desc(opportunities.id))
    .limit(limit)
    .all();
}
