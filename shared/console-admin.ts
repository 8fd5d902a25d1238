import { z } from 'zod';
import { apiKeySummarySchema, createApiKeySchema, createdApiKeySchema } from './api-keys.js';
import { automationStatusSchema, walletSchema } from './automation.js';
import { consoleSessionSchema, mcpScopeSchema } from './oauth.js';
import { initCabinetSchema, passwordSchema, USER_ROLES } from './tenancy.js';

/**
 * The contract of the console's admin slice (/api/v1/console/…): first-run setup, users, API keys,
 * settings, wallet and status, connected apps. The server validates bodies with these schemas and
 * the console parses the answers with them.
 */
export const CONSOLE_API = '/api/v1/console';

// ---- First-run setup ----

export const setupStateSchema = z.object({
  needed: z.boolean().describe('No cabinet yet: the console opens on first-run setup.'),
  allowed_here: z.boolean().describe('Whether this client may do the setup: only a browser on the machine that runs Courtier may.'),
});
export type SetupState = z.infer<typeof setupStateSchema>;

export const setupBodySchema = initCabinetSchema;

export const setupResponseSchema = z.object({ session: consoleSessionSchema, redirect_to: z.string() });
export type SetupResponse = z.infer<typeof setupResponseSchema>;

// ---- Users ----

const userRoleSchema = z.enum(USER_ROLES);
export type UserRole = z.infer<typeof userRoleSchema>;

export const cabinetUserSchema = z.object({
  user_id: z.uuid(),
  email: z.string(),
  role: userRoleSchema,
  created_at: z.iso.datetime(),
});
export type CabinetUser = z.infer<typeof cabinetUserSchema>;
export const cabinetUserListSchema = z.array(cabinetUserSchema);

export const createUserBodySchema = z.object({
  email: z.email().transform((e) => e.toLowerCase()),
  password: passwordSchema,
  role: userRoleSchema,
});

export const updateUserBodySchema = z.object({ role: userRoleSchema });

export const userIdParamsSchema = z.object({ id: z.uuid({ error: 'id must be a UUID' }) });

// ---- API keys ----

export { createApiKeySchema, createdApiKeySchema };
export const apiKeyListSchema = z.array(apiKeySummarySchema);
export const keyIdParamsSchema = z.object({ key_id: z.uuid({ error: 'key_id must be a UUID' }) });

// ---- Settings ----

export const consoleSettingsSchema = z.object({
  llm_data_sharing: z.boolean().describe('Off: personal data in webhook payloads and MCP results is masked.'),
  public_base_url: z.string().describe('The URL clients use to reach this service.'),
  public_base_url_source: z
    .enum(['configured', 'default'])
    .describe('configured: COURTIER_PUBLIC_BASE_URL; default: derived from the address the console was reached at.'),
  data_dir: z.string().describe('Where the database and secrets live; read-only here.'),
});
export type ConsoleSettings = z.infer<typeof consoleSettingsSchema>;

export const updateSettingsBodySchema = z.object({ llm_data_sharing: z.boolean() });

// ---- Wallet and status ----

export { automationStatusSchema, walletSchema };

/**
 * The cabinet's own pause of its robots. The install-wide switch is not the console's: it stays
 * with the operator (courtier robots disable, the desktop tray, the IT policy).
 */
export const robotPauseBodySchema = z.object({
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
export const grantIdParamsSchema = z.object({ grant_id: z.uuid({ error: 'grant_id must be a UUID' }) });
