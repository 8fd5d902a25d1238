import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';

/** What a person typed, for LIKE: its wildcards (% and _) and the escape character match themselves. */
export function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The expression holds the typed text anywhere (SQLite's LIKE ignores ASCII case). */
export function holdsText(expression: SQLWrapper, text: string): SQL {
  return sql`${expression} LIKE ${`%${likeEscaped(text)}%`} ESCAPE '\\'`;
}
