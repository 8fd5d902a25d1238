import { and, desc, eq, or, sql } from 'drizzle-orm';
import { holdsText } from '../platform/db/like.js';
import type { Orm } from '../platform/db/open.js';
import type { OpportunityRow } from './store.js';
import { opportunities } from './schema.js';

/**
 * Opportunities whose title or contact's names, company or email hold the text (SQLite's LIKE
 * ignores ASCII case; % and _ typed by the user match themselves), newest first.
 */
export function searchOpportunities(orm: Orm, cabinetId: string, text: string, limit: number): OpportunityRow[] {
  const contactField = (field: string) => holdsText(sql`json_extract(${opportunities.contact}, ${`$.${field}`})`, text);
  return orm
    .select()
    .from(opportunities)
    .where(
      and(
        eq(opportunities.cabinetId, cabinetId),
        or(
          holdsText(opportunities.title, text),
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
