import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getMe, type MeResponse } from '../../shared/api-keys.js';
import { ApiError } from '../errors.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import type { AuthenticatedKey } from './service.js';

/** The authenticated key of a request on an api_key route (the auth plugin guarantees it). */
export function requestKey(request: FastifyRequest): AuthenticatedKey {
  if (!request.apiKey) throw new ApiError('missing_credentials', 'This route needs an API key.');
  return request.apiKey;
}

export async function apiKeyRoutes(app: FastifyInstance): Promise<void> {
  registerEndpoint(app, getMe, (request): MeResponse => {
    const key = requestKey(request);
    const rate = request.rateLimit;
    return {
      key_id: key.keyId,
      cabinet_id: key.cabinetId,
      scopes: [...key.scopes],
      environment: key.environment,
      rate_limit: {
        limit: rate?.limit ?? 0,
        remaining: rate?.remaining ?? 0,
        reset_at_ts: Math.floor((rate?.resetAtMs ?? 0) / 1000),
      },
    };
  });
}
