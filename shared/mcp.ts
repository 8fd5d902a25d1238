import type { McpScope } from './oauth.js';

/**
 * What the MCP tools answer that no REST route does; the other tools answer the REST resources
 * (Opportunity, Client, Devis, Job…). shared/masking.ts lists the personal data of each.
 */
export interface McpWhoami {
  cabinet: { id: string; name: string };
  user: { id: string; email: string };
  client: { client_id: string; client_name: string };
  scopes: McpScope[];
  /** ISO 8601. */
  token_expires_at: string;
}

export interface DevisPdfLink {
  devis_id: string;
  /** Absolute signed download link; needs no sign-in. */
  url: string;
  /** ISO 8601. */
  expires_at: string;
}
