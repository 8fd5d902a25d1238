import { z } from 'zod';
import { scopeSchema } from './scopes.js';
import { defineEndpoint } from './endpoint.js';

export const API_KEY_ENVIRONMENTS = ['prod', 'test'] as const;
const apiKeyEnvironmentSchema = z.enum(API_KEY_ENVIRONMENTS);
export type ApiKeyEnvironment = z.infer<typeof apiKeyEnvironmentSchema>;

/** A key's value is its prefix followed by this many random base62 characters. */
export const API_KEY_RANDOM_LENGTH = 40;
export const API_KEY_PREFIX: Record<ApiKeyEnvironment, string> = { prod: 'svc_prod_', test: 'svc_test_' };

export const ipRuleSchema = z
  .union([z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()])
  .describe('An IPv4 or IPv6 address, or a CIDR block such as 192.168.1.0/24 or 2001:db8::/32.');

export const createApiKeySchema = z.object({
  name: z.string().trim().min(1).max(100),
  environment: apiKeyEnvironmentSchema,
  scopes: z
    .array(scopeSchema)
    .min(1)
    .refine((s) => new Set(s).size === s.length, 'each scope may appear once'),
  ip_allowlist: z.array(ipRuleSchema).min(1).max(100).optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
});
export type CreateApiKeyInput = z.infer<typeof createApiKeySchema>;

export const apiKeySummarySchema = z
  .object({
    key_id: z.uuid(),
    cabinet_id: z.uuid(),
    name: z.string(),
    environment: apiKeyEnvironmentSchema,
    scopes: z.array(scopeSchema),
    key_prefix: z.string().describe('The first characters of the key, to recognise it; never the whole value.'),
    ip_allowlist: z.array(z.string()).nullable(),
    expires_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    revoked_at: z.iso.datetime().nullable(),
    last_used_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKeySummary = z.infer<typeof apiKeySummarySchema>;

/** The creation result: the only time the key's value is ever shown. */
export const createdApiKeySchema = apiKeySummarySchema.extend({ key: z.string() }).meta({ id: 'CreatedApiKey' });
export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;

export const meResponseSchema = z
  .object({
    key_id: z.uuid(),
    cabinet_id: z.uuid(),
    scopes: z.array(scopeSchema),
    environment: apiKeyEnvironmentSchema,
    rate_limit: z.object({
      limit: z.int().describe('Requests allowed per window.'),
      remaining: z.int().describe('Requests left in the current window, this one counted.'),
      reset_at_ts: z.int().describe('When the window resets, in Unix seconds.'),
    }),
  })
  .meta({ id: 'ApiKeyIntrospection' });
export type MeResponse = z.infer<typeof meResponseSchema>;

export const getMe = defineEndpoint({
  method: 'GET',
  path: '/me',
  operationId: 'getMe',
  summary: 'Introspect the API key',
  description:
    'Says which cabinet the key belongs to, its scopes, its environment and its rate limit. Needs a valid key and no particular scope.',
  tag: 'Keys',
  auth: 'api_key',
  responses: { 200: { description: 'The key as the service sees it.', schema: meResponseSchema } },
  errors: [],
});
