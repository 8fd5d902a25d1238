import type { z } from 'zod';
import type { authorizationServerMetadataSchema, protectedResourceMetadataSchema } from '../../shared/oauth-endpoints.js';
import { MCP_PATH, MCP_SCOPES, OAUTH_PREFIX } from '../../shared/oauth.js';

/** Where clients find everything, derived from the base URL the client reached us at. */
export function oauthUrls(base: string) {
  return {
    issuer: base,
    resource: `${base}${MCP_PATH}`,
    protectedResourceMetadata: `${base}/.well-known/oauth-protected-resource${MCP_PATH}`,
    authorization: `${base}${OAUTH_PREFIX}/authorize`,
    token: `${base}${OAUTH_PREFIX}/token`,
    registration: `${base}${OAUTH_PREFIX}/register`,
    revocation: `${base}${OAUTH_PREFIX}/revoke`,
  };
}

/** RFC 9728. */
export function protectedResourceMetadata(base: string): z.input<typeof protectedResourceMetadataSchema> {
  const urls = oauthUrls(base);
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Courtier',
  };
}

/** RFC 8414. */
export function authorizationServerMetadata(base: string): z.input<typeof authorizationServerMetadataSchema> {
  const urls = oauthUrls(base);
  return {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorization,
    token_endpoint: urls.token,
    registration_endpoint: urls.registration,
    revocation_endpoint: urls.revocation,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...MCP_SCOPES],
    authorization_response_iss_parameter_supported: true,
  };
}
