import { z } from 'zod';
import { mcpScopeSchema } from './oauth.js';

/**
 * What the MCP tools answer that no REST route does; the other tools answer the REST resources
 * (Opportunity, Client, Devis, Job…). shared/masking.ts lists the personal data of each.
 */
export const mcpWhoamiSchema = z.object({
  cabinet: z.object({ id: z.uuid(), name: z.string() }),
  user: z.object({ id: z.uuid(), email: z.string() }),
  client: z.object({ client_id: z.string(), client_name: z.string() }),
  scopes: z.array(mcpScopeSchema),
  token_expires_at: z.iso.datetime(),
});
export type McpWhoami = z.infer<typeof mcpWhoamiSchema>;

export const devisPdfLinkSchema = z.object({
  devis_id: z.uuid(),
  url: z.string().describe('Absolute signed download link; needs no sign-in.'),
  expires_at: z.iso.datetime(),
});
export type DevisPdfLink = z.infer<typeof devisPdfLinkSchema>;
