import fp from 'fastify-plugin';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticatedKey } from '../api-keys/service.js';
import { ApiError } from '../errors.js';
import type { RateLimiter, RateLimitState } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key that authenticated this request; set on every api_key route before its handler. */
    apiKey: AuthenticatedKey | null;
    rateLimit: RateLimitState | null;
  }
}

export interface AuthOptions {
  authenticate: (presented: string, ip: string) => AuthenticatedKey;
  rateLimiter: RateLimiter;
}

/** X-API-Key or Authorization: Bearer, both accepted (part 5.1). */
function readPresentedKey(headers: IncomingHttpHeaders): string {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey.trim();
  const authorization = headers.authorization;
  if (authorization === undefined || authorization === '') {
    throw new ApiError('missing_credentials', 'Send your API key in the X-API-Key header or as Authorization: Bearer <key>.');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) {
    throw new ApiError('missing_credentials', 'The Authorization header must be "Bearer <API key>"; or send the key in X-API-Key.');
  }
  return match[1];
}

/**
 * Authenticates every route whose endpoint says auth: 'api_key', counts it against the key's
 * rate limit, then checks the scope the endpoint declares.
 */
export const authPlugin = fp<AuthOptions>(
  async (app, { authenticate, rateLimiter }) => {
    app.decorateRequest('apiKey', null);
    app.decorateRequest('rateLimit', null);

    app.addHook('onRequest', (request, reply, done) => {
      try {
        authenticateRequest(request, reply);
        done();
      } catch (err) {
        done(err as Error);
      }
    });

    function authenticateRequest(request: FastifyRequest, reply: FastifyReply): void {
      const endpoint = request.routeOptions.config.endpoint;
      if (endpoint?.auth !== 'api_key') return;
      const key = authenticate(readPresentedKey(request.headers), request.ip);
      request.apiKey = key;

      const rate = rateLimiter.hit(key.keyId);
      request.rateLimit = rate;
      const resetSeconds = rate.resetInSeconds;
      reply.header('RateLimit-Limit', String(rate.limit));
      reply.header('RateLimit-Remaining', String(rate.remaining));
      reply.header('RateLimit-Reset', String(resetSeconds));
      if (!rate.allowed) {
        throw new ApiError('rate_limited', `Too many requests for this API key; try again in ${resetSeconds} s.`, undefined, {
          'Retry-After': String(resetSeconds),
        });
      }

      if (endpoint.scope !== undefined && !key.scopes.includes(endpoint.scope)) {
        throw new ApiError('insufficient_scope', `This API key lacks the scope ${endpoint.scope}, which this route requires.`, {
          required_scope: endpoint.scope,
        });
      }
    }
  },
  { name: 'courtier-auth' },
);
