import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { z } from 'zod';
import { PUBLIC_API_PREFIX, type Endpoint } from '../../shared/endpoint.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract line this route implements; the auth plugin reads its auth kind and scope. */
    endpoint?: Endpoint;
  }
}

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

export type EndpointRequest<E extends Endpoint> = FastifyRequest<{
  Body: Infer<E['body']>;
  Querystring: Infer<E['query']>;
  Params: Infer<E['params']>;
}>;

export type EndpointHandler<E extends Endpoint> = (request: EndpointRequest<E>, reply: FastifyReply) => unknown;

/** /opportunities/{id} → /opportunities/:id */
export function toFastifyPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

export function endpointUrl(endpoint: Endpoint): string {
  return PUBLIC_API_PREFIX + toFastifyPath(endpoint.path);
}

/** Registers a route from its contract line: the same zod schemas validate it and document it. */
export function registerEndpoint<E extends Endpoint>(app: FastifyInstance, endpoint: E, handler: EndpointHandler<E>): void {
  const schema: FastifySchema = {};
  if (endpoint.body) schema.body = endpoint.body;
  if (endpoint.query) schema.querystring = endpoint.query;
  if (endpoint.params) schema.params = endpoint.params;
  app.route({
    method: endpoint.method,
    url: endpointUrl(endpoint),
    schema,
    config: { endpoint },
    handler: handler as (request: FastifyRequest, reply: FastifyReply) => unknown,
  });
}
