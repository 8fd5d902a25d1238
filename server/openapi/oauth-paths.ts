import type { z } from 'zod';
import {
  MCP_PATH,
  MCP_SCOPES,
  OAUTH_PREFIX,
  authorizationCodeTokenRequest,
  clientRegistrationSchema,
  refreshTokenRequest,
  registeredClientSchema,
  revocationRequest,
  tokenResponseSchema,
} from '../../shared/oauth.js';

type JsonSchema = Record<string, unknown>;
type Convert = (schema: z.ZodType, io: 'input' | 'output') => JsonSchema;

/** These paths hang off the service's root, not off /api/v1/public. */
const ROOT_SERVER = [{ url: '/', description: 'The root of this Courtier service' }];

const OAUTH_ERROR = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
  description: 'RFC 6749 section 5.2 error.',
};

function oauthError(description: string) {
  return { description, content: { 'application/json': { schema: OAUTH_ERROR } } };
}

const json = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });

/**
 * The MCP endpoint and its authorization server (parts 4.2, 4.3, 5.2), documented beside the REST
 * API; the request and response schemas come from shared/oauth.ts, as the server's parsing does.
 */
export function mcpAndOAuthPaths(convert: Convert): Record<string, Record<string, unknown>> {
  const tags = ['MCP and OAuth'];
  const metadata = (summary: string, description: string) => ({
    servers: ROOT_SERVER,
    get: { operationId: summary.replace(/\W+/g, '_').toLowerCase(), summary, description, tags, security: [], responses: { 200: { description: 'The metadata document (CORS open).', ...json({ type: 'object' }) } } },
  });
  return {
    '/.well-known/oauth-protected-resource': metadata(
      'Protected resource metadata',
      `RFC 9728. resource is this server's MCP URL (${MCP_PATH}); authorization_servers[0] equals the issuer. Also served at /.well-known/oauth-protected-resource${MCP_PATH}. URLs are derived from COURTIER_PUBLIC_BASE_URL, else from the loopback name the client used, else http://127.0.0.1:<port>.`,
    ),
    '/.well-known/oauth-authorization-server': metadata('Authorization server metadata', 'RFC 8414: endpoints, scopes, S256 only, public clients only, iss on authorization responses (RFC 9207).'),
    [`${OAUTH_PREFIX}/register`]: {
      servers: ROOT_SERVER,
      post: {
        operationId: 'oauth_register',
        summary: 'Dynamic client registration',
        description: 'RFC 7591, public clients only. Redirect URIs: https, or http on 127.0.0.1, [::1] or localhost (any port is accepted at authorize time for those). Limited per client address (COURTIER_OAUTH_REGISTRATIONS_PER_HOUR, default 20).',
        tags,
        security: [],
        requestBody: { required: true, ...json(convert(clientRegistrationSchema, 'input')) },
        responses: {
          201: { description: 'Registered; the metadata is echoed with client_id and client_id_issued_at.', ...json(convert(registeredClientSchema, 'output')) },
          400: oauthError('`invalid_redirect_uri` or `invalid_client_metadata`.'),
          429: oauthError('`rate_limited`: too many registrations from this address; see Retry-After.'),
        },
      },
    },
    [`${OAUTH_PREFIX}/authorize`]: {
      servers: ROOT_SERVER,
      get: {
        operationId: 'oauth_authorize',
        summary: 'Authorization (browser)',
        description:
          'Opened in the user’s browser. Unknown client or unregistered redirect_uri: an error page, never a redirect. Without a console session: 302 to /console/login?return_to=… (same-origin paths only). Invalid request: 302 to redirect_uri with error, error_description, state and iss. Otherwise 302 to the consent page; its Allow or Deny answers 303 to redirect_uri with code, state and iss, or error=access_denied.',
        tags,
        security: [],
        parameters: [
          ['response_type', true, 'code'],
          ['client_id', true, ''],
          ['redirect_uri', true, 'May be omitted when the client registered exactly one.'],
          ['code_challenge', true, 'base64url(SHA-256(code_verifier)).'],
          ['code_challenge_method', true, 'S256 (plain is refused).'],
          ['scope', false, `Space-separated among ${MCP_SCOPES.join(', ')}; all of them when omitted.`],
          ['state', false, 'Returned unchanged.'],
          ['resource', false, 'RFC 8707: this server’s MCP URL.'],
        ].map(([name, required, description]) => ({ name, in: 'query', required, description, schema: { type: 'string' } })),
        responses: { 302: { description: 'A redirect (see the description).' }, 400: { description: 'An HTML error page.' } },
      },
    },
    [`${OAUTH_PREFIX}/token`]: {
      servers: ROOT_SERVER,
      post: {
        operationId: 'oauth_token',
        summary: 'Code exchange and refresh',
        description:
          'Form-encoded. A code is single-use and lives 5 minutes; replaying it revokes every token issued from it. Refresh tokens rotate: presenting a rotated one revokes the whole family. Access tokens (svc_mcp_at_…) live 3600 s; refresh tokens (svc_mcp_rt_…) 30 days. Answers carry Cache-Control: no-store.',
        tags,
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: { oneOf: [convert(authorizationCodeTokenRequest, 'input'), convert(refreshTokenRequest, 'input')] },
            },
          },
        },
        responses: {
          200: { description: 'A new token pair.', ...json(convert(tokenResponseSchema, 'output')) },
          400: oauthError('`invalid_request`, `invalid_grant`, `invalid_scope`, `invalid_target` or `unsupported_grant_type`.'),
          401: oauthError('`invalid_client`: unknown client_id.'),
        },
      },
    },
    [`${OAUTH_PREFIX}/revoke`]: {
      servers: ROOT_SERVER,
      post: {
        operationId: 'oauth_revoke',
        summary: 'Token revocation',
        description: 'RFC 7009: 200 whether or not the token was known. Revoking a refresh token revokes its grant and every access token issued under it.',
        tags,
        security: [],
        requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: convert(revocationRequest, 'input') } } },
        responses: { 200: { description: 'Revoked, or nothing to revoke.' }, 400: oauthError('`invalid_request`: no token.') },
      },
    },
    [MCP_PATH]: {
      servers: ROOT_SERVER,
      post: {
        operationId: 'mcp',
        summary: 'MCP endpoint (Streamable HTTP, stateless)',
        description:
          'JSON-RPC 2.0, protocol 2025-11-25, no session ids: each tool call is one POST. Authorization: Bearer <access token>. tools/list shows only the tools the token’s scopes allow. Personal data in results is masked unless the cabinet enabled LLM data sharing.',
        tags,
        security: [{ McpOAuth: [] }],
        requestBody: { required: true, ...json({ type: 'object', description: 'A JSON-RPC 2.0 request.' }) },
        responses: {
          200: { description: 'The JSON-RPC response.', ...json({ type: 'object' }) },
          401: { description: 'No or bad token. WWW-Authenticate: Bearer resource_metadata="…", scope="…" (and error="invalid_token" when a token was sent).' },
          403: { description: 'The token lacks the tool’s scope: WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed>"; or an Origin that is not allowed.' },
        },
      },
      get: { operationId: 'mcp_get', summary: 'Not supported', tags, security: [], responses: { 405: { description: 'Method not allowed; Allow: POST.' } } },
      delete: { operationId: 'mcp_delete', summary: 'Not supported', tags, security: [], responses: { 405: { description: 'Method not allowed; Allow: POST.' } } },
    },
  };
}
