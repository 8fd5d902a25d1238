import { z } from 'zod';
import { apiKeySummarySchema, createApiKeySchema, createdApiKeySchema } from './api-keys.js';
import { automationStatusSchema } from './automation.js';
import { ledgerEntrySchema, walletSchema } from './wallet.js';
import { defineEndpoint } from './endpoint.js';
import { mcpScopeSchema } from './oauth.js';
import { cabinetAddressSchema, oriasSchema, passwordSchema, UNATTENDED_HUMAN_STEPS, USER_ROLES } from './tenancy.js';

/**
 * The contract of the console's admin slice (/api/v1/console/…): first-run setup, users, API keys,
 * settings, wallet and status, connected apps. The server validates bodies with these schemas and
 * the console parses the answers with them.
 */
// ---- Users ----

const userRoleSchema = z.enum(USER_ROLES);
export type UserRole = z.infer<typeof userRoleSchema>;

export const cabinetUserSchema = z.object({
  user_id: z.uuid(),
  email: z.string(),
  role: userRoleSchema,
  created_at: z.iso.datetime(),
  disabled_at: z.iso
    .datetime()
    .nullable()
    .describe('When an administrator disabled the account (it cannot sign in); null while it is active.'),
  must_change_password: z.boolean().describe('Its password was reset: the person must choose a new one at their next sign-in.'),
  has_password: z
    .boolean()
    .describe(
      'false: no password on this computer yet (passwords never sync: an account added on another computer of the cabinet signs in here once an administrator here resets its password).',
    ),
  awaiting_confirmation: z
    .array(z.enum(['admin_role', 'enabling']))
    .describe(
      'Changes made on another computer of the cabinet that take effect here once an administrator here confirms them: admin_role (made an administrator: confirmed by making them one here; `role` is the one in effect meanwhile), enabling (enabled again: confirmed by enabling here; `disabled_at` stays set meanwhile).',
    ),
});
export type CabinetUser = z.infer<typeof cabinetUserSchema>;
export const cabinetUserListSchema = z.array(cabinetUserSchema);

const createUserBodySchema = z.object({
  email: z
    .email()
    .max(254)
    .transform((e) => e.toLowerCase()),
  password: passwordSchema,
  role: userRoleSchema,
});

const updateUserBodySchema = z.object({ role: userRoleSchema });

export const userIdParamsSchema = z.object({ id: z.uuid({ error: 'id must be a UUID' }) });

// ---- API keys ----

export { createdApiKeySchema };
export const apiKeyListSchema = z.array(apiKeySummarySchema);
const keyIdParamsSchema = z.object({ key_id: z.uuid({ error: 'key_id must be a UUID' }) });

// ---- Settings ----

export const consoleSettingsSchema = z.object({
  llm_data_sharing: z.boolean().describe('Off: personal data in webhook payloads and MCP results is masked.'),
  unattended_human_steps: z
    .enum(UNATTENDED_HUMAN_STEPS)
    .describe(
      'A job an integration enqueued (an API key) whose insurer portal needs a person (a code, an approval, a captcha): wait for one, as any job does (up to 5 minutes), or stop before the portal sends a code (failed human_required, refunded).',
    ),
  orias: z
    .string()
    .nullable()
    .describe('The cabinet’s ORIAS registration number (8 digits), printed on its advice documents; null until set.'),
  address: z.string().nullable().describe('The cabinet’s postal address, printed on its advice documents; null until set.'),
  public_base_url: z.string().describe('The URL clients use to reach this service.'),
  public_base_url_source: z
    .enum(['configured', 'default'])
    .describe('configured: COURTIER_PUBLIC_BASE_URL; default: derived from the address the console was reached at.'),
  data_dir: z.string().describe('Where the database and secrets live; read-only here.'),
});
export type ConsoleSettings = z.infer<typeof consoleSettingsSchema>;

const updateSettingsBodySchema = z
  .object({
    llm_data_sharing: z.boolean().optional(),
    unattended_human_steps: z.enum(UNATTENDED_HUMAN_STEPS).optional(),
    orias: oriasSchema.nullable().optional().describe('null clears it.'),
    address: cabinetAddressSchema.nullable().optional().describe('null clears it.'),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), 'give at least one setting');

// ---- Wallet and status ----

export { automationStatusSchema };

/** A ledger line as a person reads it: the pricing behind a debit or a refund, by its names. */
const consoleLedgerEntrySchema = ledgerEntrySchema.extend({
  pricing: z
    .object({
      job_id: z.uuid(),
      devis_id: z.uuid(),
      client_id: z.uuid().nullable().describe('null for a quote without a client.'),
      client_name: z.string().nullable().describe('null without a client, or once the client was erased.'),
      product_label: z.string(),
      insurer_name: z.string(),
    })
    .nullable()
    .describe('The pricing a debit or a refund is for; null for other entries, and for a job this install does not hold yet.'),
});

export const consoleWalletSchema = walletSchema
  .extend({ ledger: z.array(consoleLedgerEntrySchema).describe(walletSchema.shape.ledger.description ?? '') })
  .meta({ id: 'ConsoleWallet' });
export type ConsoleWallet = z.infer<typeof consoleWalletSchema>;

/**
 * The cabinet's own pause of its robots. The install-wide switch is not the console's: it stays
 * with the operator (courtier robots disable, the desktop tray, the IT policy).
 */
const robotPauseBodySchema = z.object({
  paused: z.boolean().describe('true pauses this cabinet’s robots (new tarifications answer 503, queued jobs wait), false resumes them.'),
  reason: z.string().trim().min(1).max(500).optional(),
});

// ---- Connected apps ----

const connectedAppSchema = z.object({
  grant_id: z.uuid(),
  client_id: z.string(),
  client_name: z.string(),
  scopes: z.array(mcpScopeSchema),
  created_at: z.iso.datetime(),
  last_used_at: z.iso.datetime().nullable(),
});
export type ConnectedApp = z.infer<typeof connectedAppSchema>;
export const connectedAppListSchema = z.array(connectedAppSchema);
const grantIdParamsSchema = z.object({ grant_id: z.uuid({ error: 'grant_id must be a UUID' }) });

// ---- Endpoints ----

const TAG = 'Console';
const ADMIN_TAG = 'Console: administration';

export const listUsers = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/users',
  operationId: 'consoleListUsers',
  summary: 'The cabinet’s users',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  responses: { 200: { description: 'Every user of the cabinet.', schema: cabinetUserListSchema } },
  errors: [],
});

export const createUser = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/users',
  operationId: 'consoleCreateUser',
  summary: 'Add a user to the cabinet',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  body: createUserBodySchema,
  responses: { 201: { description: 'Added.', schema: cabinetUserSchema } },
  errors: ['email_taken'],
});

export const updateUser = defineEndpoint({
  method: 'PATCH',
  surface: 'console',
  path: '/users/{id}',
  operationId: 'consoleUpdateUser',
  summary: 'Change a user’s role',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  params: userIdParamsSchema,
  body: updateUserBodySchema,
  responses: { 200: { description: 'The user.', schema: cabinetUserSchema } },
  errors: ['not_found', 'last_admin'],
});

export const listKeys = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/keys',
  operationId: 'consoleListKeys',
  summary: 'The cabinet’s API keys (never their values)',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  responses: { 200: { description: 'Every key.', schema: apiKeyListSchema } },
  errors: [],
});

export const createKey = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/keys',
  operationId: 'consoleCreateKey',
  summary: 'Create an API key',
  description: 'The only answer that carries the key’s value.',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  body: createApiKeySchema,
  responses: { 201: { description: 'Created.', schema: createdApiKeySchema } },
  errors: [],
});

export const revokeKey = defineEndpoint({
  method: 'DELETE',
  surface: 'console',
  path: '/keys/{key_id}',
  operationId: 'consoleRevokeKey',
  summary: 'Revoke an API key',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  params: keyIdParamsSchema,
  responses: { 200: { description: 'The revoked key.', schema: apiKeySummarySchema } },
  errors: ['not_found'],
});

export const getSettings = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/settings',
  operationId: 'consoleGetSettings',
  summary: 'The cabinet’s settings',
  tag: TAG,
  auth: 'console',
  responses: { 200: { description: 'The settings.', schema: consoleSettingsSchema } },
  errors: [],
});

export const updateSettings = defineEndpoint({
  method: 'PATCH',
  surface: 'console',
  path: '/settings',
  operationId: 'consoleUpdateSettings',
  summary: 'Change the cabinet’s settings',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  body: updateSettingsBodySchema,
  responses: { 200: { description: 'The settings.', schema: consoleSettingsSchema } },
  errors: [],
});

export const getConsoleWallet = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/wallet',
  operationId: 'consoleGetWallet',
  summary: 'The cabinet’s credits',
  tag: TAG,
  auth: 'console',
  responses: { 200: { description: 'The wallet, each pricing named.', schema: consoleWalletSchema } },
  errors: [],
});

const creditGrantBodySchema = z.strictObject({
  amount: z.int().min(1).max(10_000_000).describe('Whole credits to add.'),
  note: z.string().trim().min(1).max(200).describe('Why (an invoice, a purchase…): kept in the ledger and the audit log.'),
});

export const grantConsoleCredits = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/wallet/grants',
  operationId: 'consoleGrantCredits',
  summary: 'Add credits to the cabinet’s wallet',
  description:
    'Administrators, for a cabinet that does not sync (the CLI’s credits grant, from the console). A cabinet that syncs has one wallet, on its hub, where its operator grants: 409 credits_on_hub.',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  body: creditGrantBodySchema,
  responses: { 201: { description: 'Granted.', schema: z.object({ granted: z.int(), balance: z.int() }) } },
  errors: ['credits_on_hub'],
});

export const getConsoleStatus = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/status',
  operationId: 'consoleGetStatus',
  summary: 'The state of automation for the cabinet',
  tag: TAG,
  auth: 'console',
  responses: { 200: { description: 'The status.', schema: automationStatusSchema } },
  errors: [],
});

export const setRobotPause = defineEndpoint({
  method: 'PUT',
  surface: 'console',
  path: '/robots/pause',
  operationId: 'consoleSetRobotPause',
  summary: 'Pause or resume this cabinet’s robots',
  description: 'This cabinet only: the install-wide switch stays with the operator (CLI, desktop tray, IT policy).',
  tag: ADMIN_TAG,
  auth: 'console_admin',
  body: robotPauseBodySchema,
  responses: { 200: { description: 'The status after the change.', schema: automationStatusSchema } },
  errors: [],
});

export const listConnectedApps = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/connected-apps',
  operationId: 'consoleListConnectedApps',
  summary: 'The assistants the signed-in user connected',
  tag: TAG,
  auth: 'console',
  responses: { 200: { description: 'The user’s live grants.', schema: connectedAppListSchema } },
  errors: [],
});

export const revokeConnectedApp = defineEndpoint({
  method: 'DELETE',
  surface: 'console',
  path: '/connected-apps/{grant_id}',
  operationId: 'consoleRevokeConnectedApp',
  summary: 'Disconnect an assistant',
  tag: TAG,
  auth: 'console',
  params: grantIdParamsSchema,
  responses: { 204: { description: 'Disconnected: its tokens stop working at once.' } },
  errors: ['not_found'],
});

export const CONSOLE_ADMIN_ENDPOINTS = [
  listUsers,
  createUser,
  updateUser,
  listKeys,
  createKey,
  revokeKey,
  getSettings,
  updateSettings,
  getConsoleWallet,
  grantConsoleCredits,
  getConsoleStatus,
  setRobotPause,
  listConnectedApps,
  revokeConnectedApp,
] as const;
