import fp from 'fastify-plugin';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthKind } from '../../shared/endpoint.js';
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
 * One auth kind's check: it throws (or rejects with) an ApiError to refuse, and may record who
 * called on the request. The hub's device check reads PostgreSQL, so a check may be asynchronous.
 */
export type RequestCheck = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

export interface AuthOptions {
  /** The check of each auth kind this app's endpoints declare (the agent's four, the hub's device); each module brings its own. */
  checks: Partial<Record<Exclude<AuthKind, 'none'>, RequestCheck>>;
}

/** An API key, counted against its rate limit, then the scope its endpoint declares. */
export function apiKeyCheck(authenticate: (presented: string, ip: string) => AuthenticatedKey, rateLimiter: RateLimiter): RequestCheck {
  return (request, reply) => {
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

    const scope = request.routeOptions.config.endpoint?.scope;
    if (scope !== undefined && !key.scopes.includes(scope)) {
      throw new ApiError('insufficient_scope', `This API key lacks the scope ${scope}, which this route requires.`, {
        required_scope: scope,
      });
    }
  };
}

/**
 * Runs, before the body is read, the check of the auth kind the route's endpoint declares: the
 * one place where "who may call this route" is decided.
 */
export const authPlugin = fp<AuthOptions>(
  async (app, { checks }) => {
    app.decorateRequest('apiKey', null);
    app.decorateRequest('rateLimit', null);

    app.addHook('onRequest', (request, reply, done) => {
      const auth = request.routeOptions.config.endpoint?.auth;
      if (auth === undefined || auth === 'none') return done();
      const check = checks[auth];
      if (!check)
        return done(
          new Error(
            `No check for the auth kind ${auth} in this app (${request.routeOptions.config.endpoint?.operationId ?? request.url}).`,
          ),
        );
      try {
        const pending = check(request, reply);
        if (pending instanceof Promise)
          pending.then(
            () => done(),
            (err: unknown) => done(err as Error),
          );
        else done();
      } catch (err) {
        done(err as Error);
      }
    });
  },
  { name: 'courtier-auth' },
);
