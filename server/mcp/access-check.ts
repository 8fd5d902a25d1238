import type { FastifyRequest } from 'fastify';
import { MCP_PATH, MCP_SCOPES } from '../../shared/oauth.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../platform/http/base-url.js';
import type { AccessTokenAuthenticator, McpAccess } from '../oauth/access.js';
import type { RequestCheck } from '../plugins/auth.js';
import type { RateLimiter } from '../plugins/rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The access token's grant on POST /mcp, set before the body is read; null elsewhere. */
    mcpAccess: McpAccess | null;
  }
}

const ALL_SCOPES = MCP_SCOPES.join(' ');

/** The RFC 9728 metadata document of this resource, which names the authorization server. */
export function resourceMetadataUrl(deps: Deps, request: FastifyRequest): string {
  return `${publicBaseUrl(deps.config, request)}/.well-known/oauth-protected-resource${MCP_PATH}`;
}

/**
 * The access_token check, before the body is read: a client without a valid token learns where
 * to get one (RFC 9728, MCP authorization); a valid one is counted against its grant's limit.
 */
export function accessTokenCheck(deps: Deps, authenticate: AccessTokenAuthenticator, rateLimiter: RateLimiter): RequestCheck {
  return (request, reply) => {
    const authorization = request.headers.authorization;
    const token = authorization === undefined ? undefined : /^Bearer +(\S+)\s*$/i.exec(authorization)?.[1];
    const access = token === undefined ? null : authenticate(token);
    if (access) {
      request.mcpAccess = access;
      // Per grant, not per token: a refresh must not buy a fresh budget. Prefixed so that it never meets an API key's id.
      const rate = rateLimiter.hit(`grant:${access.grantId}`);
      reply.header('RateLimit-Limit', String(rate.limit));
      reply.header('RateLimit-Remaining', String(rate.remaining));
      reply.header('RateLimit-Reset', String(rate.resetInSeconds));
      if (!rate.allowed) {
        throw new ApiError('rate_limited', `Too many requests with this access token; try again in ${rate.resetInSeconds} s.`, undefined, {
          'Retry-After': String(rate.resetInSeconds),
        });
      }
      return;
    }
    const challenge = `Bearer resource_metadata="${resourceMetadataUrl(deps, request)}", scope="${ALL_SCOPES}"`;
    if (token === undefined) {
      throw new ApiError(
        'missing_credentials',
        'Send an OAuth access token as Authorization: Bearer <token>; the WWW-Authenticate header says where to get one.',
        undefined,
        {
          'WWW-Authenticate': challenge,
        },
      );
    }
    const description = 'The access token is unknown, expired or revoked';
    throw new ApiError('invalid_token', `${description}: refresh it or authorize again.`, undefined, {
      'WWW-Authenticate': `${challenge}, error="invalid_token", error_description="${description}"`,
    });
  };
}
