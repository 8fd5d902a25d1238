import { z } from 'zod';
import type { Scope } from './scopes.js';

/** The scopes an MCP client may request (part 5.2): the REST scopes but webhooks:manage. */
export const MCP_SCOPES = [
  'crm:read',
  'crm:write',
  'devis:read',
  'devis:draft',
  'automation:read',
  'automation:enqueue',
] as const satisfies readonly Scope[];
export type McpScope = (typeof MCP_SCOPES)[number];
export const mcpScopeSchema = z.enum(MCP_SCOPES);

/** Scopes that let a client change data; the consent page flags them. */
export const MCP_WRITE_SCOPES: readonly McpScope[] = ['crm:write', 'devis:draft', 'automation:enqueue'];

/** What each scope lets an assistant do, in the words the consent page shows. */
export const MCP_SCOPE_WORDING: Record<McpScope, { en: string; fr: string }> = {
  'crm:read': { en: 'Read your opportunities and clients', fr: 'Consulter vos opportunités et vos clients' },
  'crm:write': { en: 'Create and change opportunities and clients', fr: 'Créer et modifier des opportunités et des clients' },
  'devis:read': { en: 'Read your quotes and their PDFs', fr: 'Consulter vos devis et leurs PDF' },
  'devis:draft': { en: 'Create draft quotes', fr: 'Créer des brouillons de devis' },
  'automation:read': {
    en: 'Read tarification jobs, products and your Robot credits',
    fr: 'Consulter les tarifications, les produits et vos crédits Robot',
  },
  'automation:enqueue': {
    en: 'Launch tarifications, which spend Robot credits',
    fr: 'Lancer des tarifications, qui consomment des crédits Robot',
  },
};

export const OAUTH_PREFIX = '/api/v1/mcp/oauth';
export const MCP_PATH = '/mcp';
export const ACCESS_TOKEN_PREFIX = 'svc_mcp_at_';
export const REFRESH_TOKEN_PREFIX = 'svc_mcp_rt_';
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
export const AUTHORIZATION_CODE_TTL_SECONDS = 300;
/** How long a consent page stays answerable after the authorize request that opened it. */
export const CONSENT_REQUEST_TTL_SECONDS = 600;

/** RFC 7591 registration request: public clients only. Unknown members are ignored, as the RFC asks. */
export const clientRegistrationSchema = z.object({
  client_name: z.string().trim().min(1).max(200).optional(),
  redirect_uris: z.array(z.string().max(2000)).min(1).max(20),
  token_endpoint_auth_method: z.literal('none').default('none'),
  grant_types: z
    .array(z.enum(['authorization_code', 'refresh_token']))
    .min(1)
    .default(['authorization_code', 'refresh_token']),
  response_types: z.array(z.literal('code')).min(1).default(['code']),
  scope: z.string().max(1000).optional(),
  client_uri: z.string().max(2000).optional(),
  logo_uri: z.string().max(2000).optional(),
  software_id: z.string().max(200).optional(),
  software_version: z.string().max(200).optional(),
});

export const registeredClientSchema = z.object({
  client_id: z.string(),
  client_id_issued_at: z.number().int(),
  client_name: z.string().optional(),
  redirect_uris: z.array(z.string()),
  token_endpoint_auth_method: z.literal('none'),
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
  scope: z.string().optional(),
});
export type RegisteredClient = z.infer<typeof registeredClientSchema>;

export const tokenResponseSchema = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

const formString = z.string().min(1).max(4000);

/** Token request, code exchange (part 4.3), form-encoded. */
export const authorizationCodeTokenRequest = z.object({
  grant_type: z.literal('authorization_code'),
  code: formString,
  code_verifier: formString.describe('The PKCE verifier whose S256 hash was the code_challenge.'),
  client_id: formString,
  redirect_uri: formString.describe('The redirect_uri of the authorization request, exactly.'),
  resource: formString.optional().describe('RFC 8707: if sent, this server’s MCP URL.'),
});

/** Token request, refresh (part 4.3: "not shown"; RFC 6749 section 6 for a public client). */
export const refreshTokenRequest = z.object({
  grant_type: z.literal('refresh_token'),
  refresh_token: formString,
  client_id: formString.describe('The client the refresh token was issued to.'),
  scope: formString.optional().describe('Space-separated; equal to or narrower than the granted scopes.'),
  resource: formString.optional(),
});

/** RFC 7009. */
export const revocationRequest = z.object({
  token: formString,
  token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
  client_id: formString.optional(),
});

/** What the consent page needs to show (GET /api/v1/mcp/oauth/consent/{request_id}). */
export const consentRequestSchema = z.object({
  request_id: z.string(),
  client_name: z.string(),
  client_id: z.string(),
  redirect_host: z.string(),
  scopes: z.array(z.object({ scope: mcpScopeSchema, en: z.string(), fr: z.string(), writes: z.boolean() })),
  user: z.object({ email: z.string() }),
  csrf_token: z.string(),
  decision_url: z.string(),
});
export type ConsentRequest = z.infer<typeof consentRequestSchema>;

/** The console session (GET /api/v1/console/session). */
export const consoleSessionSchema = z.object({
  user: z.object({
    id: z.string(),
    email: z.string(),
    role: z.string(),
    must_change_password: z
      .boolean()
      .describe(
        'The password was reset by an administrator: every console route but the change of one’s own password answers 403 password_change_required until it is changed.',
      ),
  }),
  cabinet: z.object({ id: z.string(), name: z.string() }),
  expires_at: z.string(),
});
export type ConsoleSession = z.infer<typeof consoleSessionSchema>;

export const loginBodySchema = z.object({
  email: z.string().trim().min(1).max(254),
  password: z.string().min(1).max(1000),
  /** The cabinet to sign in to, when the email and password open accounts in several (after a 409 cabinet_choice_required). */
  cabinet_id: z.uuid({ error: 'cabinet_id must be a UUID' }).optional(),
  return_to: z.string().max(4000).optional(),
});

/** The details of a 409 cabinet_choice_required: the cabinets the email and password open. */
export const cabinetChoicesSchema = z.array(z.object({ cabinet_id: z.string(), name: z.string() })).min(2);
export type CabinetChoices = z.infer<typeof cabinetChoicesSchema>;

/**
 * A return_to is followed only when it is a path on this origin: it starts with one slash, and
 * neither a second slash nor a backslash (which browsers read as a slash) makes it protocol-relative.
 */
export function isSafeReturnTo(value: string): boolean {
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return false;
  // Tabs and newlines are stripped by URL parsers, so "/\t/evil" would become "//evil".
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return false;
  try {
    const base = 'http://return-to.invalid';
    return new URL(value, base).origin === base;
  } catch {
    return false;
  }
}
