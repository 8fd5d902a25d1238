import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

/** What the audit log records; each one names its verb in the past, as the console shows it. */
export const AUDIT_ACTIONS = [
  'console.signed_in',
  'console.sign_in_failed',
  'lan.address_blocked',
  'lan.address_unblocked',
  'user.created',
  'user.role_changed',
  'user.password_changed',
  'user.password_reset',
  'user.disabled',
  'user.enabled',
  'user.removed',
  'api_key.created',
  'api_key.revoked',
  'insurer_credentials.set',
  'robots.paused',
  'robots.resumed',
  'lan.enabled',
  'lan.disabled',
  'lan.certificate_issued',
  'webhook.created',
  'webhook.deleted',
  'oauth.grant_given',
  'oauth.grant_revoked',
  'insurer_credentials.deleted',
  'console.desktop_signed_in',
  'settings.llm_data_sharing_changed',
  'settings.unattended_human_steps_changed',
  'settings.identity_changed',
  'credits.granted',
  'sync.connected',
  'sync.disconnected',
  'sync.paused',
  'sync.resumed',
  'sync.erasure_applied',
  'sync.changes_set_aside',
  'sync.conflict_discarded',
  'sync.conflicts_retried',
  'sync.refused_discarded',
  'sync.refused_resent',
  'sync.resynced',
  'sync.user_changed',
  'insurer_adapter.installed',
  'insurer_adapter.removed',
  'conseil.created',
  'clients.imported',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

const auditEntrySchema = z.object({
  id: z.string(),
  at: z.iso.datetime(),
  action: z.enum(AUDIT_ACTIONS),
  result: z.enum(['success', 'failure']),
  actor: z.object({
    kind: z.enum(['user', 'api_key', 'oauth_client', 'cli', 'system', 'anonymous']),
    id: z.string().nullable(),
    label: z.string().nullable(),
  }),
  /** The client's address as the service saw it (the connection's, or a trusted proxy's word). */
  address: z.string().nullable(),
  listener: z.enum(['loopback', 'lan', 'cli', 'internal']),
  target: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  /** false for install-wide actions (LAN mode, certificates), which every cabinet's admins see. */
  cabinet_scoped: z.boolean(),
});
export type AuditEntry = z.infer<typeof auditEntrySchema>;

const auditQuerySchema = z.strictObject({
  action: z.enum(AUDIT_ACTIONS).optional(),
  user_id: z.string().min(1).max(100).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const auditPageSchema = z.object({ data: z.array(auditEntrySchema) });

export const listAuditEntries = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/audit',
  operationId: 'consoleListAudit',
  summary: 'The cabinet’s audit log, newest first',
  description:
    'Who did what, from which address and listener, with what result. Kept one year; never holds a secret. Page back with until = the oldest entry’s at.',
  tag: 'Console: administration',
  auth: 'console_admin',
  query: auditQuerySchema,
  responses: { 200: { description: 'Entries, newest first.', schema: auditPageSchema } },
  errors: [],
});
