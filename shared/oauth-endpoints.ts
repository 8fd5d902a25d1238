import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import {
  authorizationCodeTokenRequest,
  clientRegistrationSchema,
  consentRequestSchema,
  MCP_PATH,
  MCP_SCOPES,
  OAUTH_PREFIX,
  refreshTokenRequest,
  registeredClientSchema,
  revocationRequest,
  tokenResponseSchema,
} from './oauth.js';

/**
 * The MCP endpoint and its authorization server (parts 4.2, 4.3, 5.2). They hang off the
 * service's root. The token, registration and revocation endpoints answer RFC 6749 errors, whose
 * code depends on the field, so their handlers read the forms against these schemas themselves.
 */
const TAG = 'MCP and OAuth';

/** RFC 6749 section 5.2. */
const oauthErrorSchema = z.object({ error: z.string(), error_description: z.string() }).meta({ id: 'OAuthError' });

const oauthError = (description: string) => ({ description, schema: oauthErrorSchema });

/** The MCP endpoint's transport-level refusals: JSON-RPC errors that answer no request (id null). */
const jsonRpcErrorSchema = z
  .object({ jsonrpc: z.literal('2.0'), id: z.null(), error: z.object({ code: z.number().int(), message: z.string() }) })
  .meta({ id: 'JsonRpcError' });
export type JsonRpcError = z.infer<typeof jsonRpcErrorSchema>;

export const protectedResourceMetadataSchema = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.enum(MCP_SCOPES)),
  bearer_methods_supported: z.array(z.literal('header')),
  resource_name: z.string(),
});

export const authorizationServerMetadataSchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  registration_endpoint: z.string(),
  revocation_endpoint: z.string(),
  response_types_supported: z.array(z.string()),
  response_modes_supported: z.array(z.string()),
  grant_types_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.string()),
  token_endpoint_auth_methods_supported: z.array(z.string()),
  revocation_endpoint_auth_methods_supported: z.array(z.string()),
  scopes_supported: z.array(z.enum(MCP_SCOPES)),
  authorization_response_iss_parameter_supported: z.boolean(),
});

const RESOURCE_METADATA_DESCRIPTION = `RFC 9728. resource is this server's MCP URL (${MCP_PATH}); authorization_servers[0] equals the issuer. URLs are derived from COURTIER_PUBLIC_BASE_URL, else from the loopback name the client used, else http://127.0.0.1:<port>. CORS open.`;

export const getProtectedResourceMetadata = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/.well-known/oauth-protected-resource',
  operationId: 'getProtectedResourceMetadata',
  summary: 'Protected resource metadata',
  description: RESOURCE_METADATA_DESCRIPTION,
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: { 200: { description: 'The metadata document.', schema: protectedResourceMetadataSchema } },
  errors: [],
});

/** The same document at its path-suffixed address (RFC 9728 section 3.1). */
export const getMcpResourceMetadata = defineEndpoint({
  ...getProtectedResourceMetadata,
  path: `/.well-known/oauth-protected-resource${MCP_PATH}`,
  operationId: 'getMcpResourceMetadata',
  summary: 'Protected resource metadata of the MCP endpoint',
});

export const getAuthorizationServerMetadata = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/.well-known/oauth-authorization-server',
  operationId: 'getAuthorizationServerMetadata',
  summary: 'Authorization server metadata',
  description: 'RFC 8414: endpoints, scopes, S256 only, public clients only, iss on authorization responses (RFC 9207). CORS open.',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: { 200: { description: 'The metadata document.', schema: authorizationServerMetadataSchema } },
  errors: [],
});

export const registerOAuthClient = defineEndpoint({
  method: 'POST',
  surface: 'root',
  path: `${OAUTH_PREFIX}/register`,
  operationId: 'registerOAuthClient',
  summary: 'Dynamic client registration',
  description:
    'RFC 7591, public clients only. Redirect URIs: https, or http on 127.0.0.1, [::1] or localhost (any port is accepted at authorize time for those). Limited per client address (COURTIER_OAUTH_REGISTRATIONS_PER_HOUR, default 20).',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  body: clientRegistrationSchema,
  validatedBy: 'handler',
  responses: {
    201: { description: 'Registered; the metadata is echoed with client_id and client_id_issued_at.', schema: registeredClientSchema },
    400: oauthError('`invalid_redirect_uri` or `invalid_client_metadata`.'),
    429: oauthError('`rate_limited`: too many registrations from this address; see Retry-After.'),
  },
  errors: [],
});

/** RFC 6749 4.1.1 with PKCE (RFC 7636) and a resource indicator (RFC 8707). */
const authorizeQuerySchema = z.object({
  response_type: z.literal('code'),
  client_id: z.string(),
  redirect_uri: z.string().optional().describe('May be omitted when the client registered exactly one.'),
  code_challenge: z.string().describe('base64url(SHA-256(code_verifier)).'),
  code_challenge_method: z.literal('S256').describe('S256 (plain is refused).'),
  scope: z
    .string()
    .optional()
    .describe(`Space-separated among ${MCP_SCOPES.join(', ')}; all of them when omitted.`),
  state: z.string().optional().describe('Returned unchanged.'),
  resource: z.string().optional().describe('RFC 8707: this server’s MCP URL.'),
});

export const authorize = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: `${OAUTH_PREFIX}/authorize`,
  operationId: 'authorize',
  summary: 'Authorization (browser)',
  description:
    'Opened in the user’s browser. Unknown client or unregistered redirect_uri: an error page, never a redirect. Without a console session: 302 to /console/login?return_to=… (same-origin paths only). Invalid request: an error page, or, when the user already consented to this client, 302 to redirect_uri with error, error_description, state and iss. Otherwise 302 to the consent page; its Allow or Deny answers 303 to redirect_uri with code, state and iss, or error=access_denied.',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  query: authorizeQuerySchema,
  validatedBy: 'handler',
  responses: {
    302: { description: 'A redirect (see the description).' },
    400: { description: 'An HTML error page.', contentType: 'text/html' },
  },
  errors: [],
});

export const getConsentRequest = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: `${OAUTH_PREFIX}/consent/{request_id}`,
  operationId: 'getConsentRequest',
  summary: 'The authorization request the consent page shows',
  description: 'For the console’s consent page, with the signed-in user’s session cookie.',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  params: z.object({ request_id: z.string().min(1).max(100) }),
  responses: { 200: { description: 'The client, the scopes in words, and the form’s CSRF token.', schema: consentRequestSchema } },
  errors: ['not_signed_in', 'password_change_required', 'consent_request_not_found', 'consent_forbidden'],
});

const consentDecisionSchema = z.object({
  request_id: z.string().min(1, 'The form did not say which authorization request it answers.'),
  // Checked by the handler against the session, so that a missing token is a 403 like a wrong one.
  csrf_token: z.string().optional(),
  decision: z.enum(['allow', 'deny'], { error: 'The decision must be allow or deny.' }),
});

export const decideConsent = defineEndpoint({
  method: 'POST',
  surface: 'root',
  path: `${OAUTH_PREFIX}/consent`,
  operationId: 'decideConsent',
  summary: 'The user’s answer on the consent page (browser form)',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  body: consentDecisionSchema,
  bodyEncoding: 'form',
  responses: {
    303: { description: 'To the client’s redirect_uri with code, state and iss, or error=access_denied.' },
    400: { description: 'An HTML page saying why the answer was not taken.', contentType: 'text/html' },
    401: { description: 'An HTML page: the console session ended.', contentType: 'text/html' },
  },
  errors: [],
});

export const exchangeToken = defineEndpoint({
  method: 'POST',
  surface: 'root',
  path: `${OAUTH_PREFIX}/token`,
  operationId: 'exchangeToken',
  summary: 'Code exchange and refresh',
  description:
    'Form-encoded. A code is single-use and lives 5 minutes; replaying it revokes every token issued from it. Refresh tokens rotate: presenting a rotated one revokes the whole family. Access tokens (svc_mcp_at_…) live 3600 s; refresh tokens (svc_mcp_rt_…) 30 days. Answers carry Cache-Control: no-store.',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  body: z.union([authorizationCodeTokenRequest, refreshTokenRequest]),
  bodyEncoding: 'form',
  validatedBy: 'handler',
  responses: {
    200: { description: 'A new token pair.', schema: tokenResponseSchema },
    400: oauthError('`invalid_request`, `invalid_grant`, `invalid_scope`, `invalid_target` or `unsupported_grant_type`.'),
    401: oauthError('`invalid_client`: unknown client_id.'),
  },
  errors: [],
});

export const revokeToken = defineEndpoint({
  method: 'POST',
  surface: 'root',
  path: `${OAUTH_PREFIX}/revoke`,
  operationId: 'revokeToken',
  summary: 'Token revocation',
  description:
    'RFC 7009: 200 whether or not the token was known. Revoking a refresh token revokes its grant and every access token issued under it.',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  body: revocationRequest,
  bodyEncoding: 'form',
  validatedBy: 'handler',
  responses: { 200: { description: 'Revoked, or nothing to revoke.' }, 400: oauthError('`invalid_request`: no token.') },
  errors: [],
});

export const callMcp = defineEndpoint({
  method: 'POST',
  surface: 'root',
  path: MCP_PATH,
  operationId: 'callMcp',
  summary: 'MCP endpoint (Streamable HTTP, stateless)',
  description:
    'JSON-RPC 2.0, protocol 2025-11-25, no session ids: each tool call is one POST, and batches are refused. Authorization: Bearer <access token>; a missing or bad token gets WWW-Authenticate: Bearer resource_metadata="…", scope="…", and a tool the token’s scopes do not allow gets error="insufficient_scope". tools/list shows only the tools the token’s scopes allow. Personal data in results is masked unless the cabinet enabled LLM data sharing. GET and DELETE (an SSE stream, a session end) answer 405 with Allow: POST.',
  tag: TAG,
  auth: 'access_token',
  body: z.record(z.string(), z.unknown()).describe('One JSON-RPC 2.0 message.'),
  validatedBy: 'handler',
  responses: {
    200: {
      description: 'The JSON-RPC response; each tool’s result is described by its outputSchema in tools/list.',
      schema: z.record(z.string(), z.unknown()),
    },
    202: { description: 'A notification (or a response): accepted, no body. Nothing outlives the request, so nothing is done with it.' },
    400: {
      description:
        'A JSON-RPC batch, a body that is not a JSON-RPC message (-32700), or an MCP-Protocol-Version this server does not speak (-32000); answered as a JSON-RPC error, id null.',
      schema: jsonRpcErrorSchema,
    },
    406: {
      description:
        'An Accept header that does not list both application/json and text/event-stream; answered as a JSON-RPC error (-32000), id null.',
      schema: jsonRpcErrorSchema,
    },
  },
  errors: ['insufficient_scope', 'invalid_json'],
});

/** Every route of the authorization server and the MCP endpoint. */
export const MCP_AND_OAUTH_ENDPOINTS = [
  getProtectedResourceMetadata,
  getMcpResourceMetadata,
  getAuthorizationServerMetadata,
  registerOAuthClient,
  authorize,
  getConsentRequest,
  decideConsent,
  exchangeToken,
  revokeToken,
  callMcp,
] as const;
