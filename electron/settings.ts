import { z } from 'zod';
import type { Policy } from '../server/policy.js';
import { UPDATE_CHANNELS } from '../server/policy.js';

/**
 * The broker's own desktop settings (settings.json in the app's userData folder), changed from the
 * tray. The IT policy overrides some of them; see effectiveSettings.
 */
const userSettingsSchema = z.object({
  startAtLogin: z.boolean().default(false),
  /** The port used last time on loopback: tried first so that the console keeps its origin (its local storage). */
  lastPort: z.number().int().min(0).max(65535).default(0),
  /** Show the robots' browser window (to watch them, to answer a captcha). */
  robotsHeaded: z.boolean().default(false),
  sandbox: z.boolean().default(true),
  publicBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
  mfaNotifications: z.boolean().default(true),
  updateChannel: z.enum(UPDATE_CHANNELS).default('latest'),
});
export type UserSettings = z.infer<typeof userSettingsSchema>;

export const DEFAULT_USER_SETTINGS: UserSettings = userSettingsSchema.parse({});

/** Reads settings.json's text; anything unreadable or invalid gives the defaults (never throws). */
export function parseUserSettings(text: string | null): { settings: UserSettings; problem: string | null } {
  if (text === null) return { settings: DEFAULT_USER_SETTINGS, problem: null };
  try {
    const parsed = userSettingsSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { settings: parsed.data, problem: null };
    return {
      settings: DEFAULT_USER_SETTINGS,
      problem: `settings.json is invalid (${parsed.error.issues[0]?.message ?? 'unknown'}); defaults apply.`,
    };
  } catch (err) {
    return { settings: DEFAULT_USER_SETTINGS, problem: `settings.json is not valid JSON (${(err as Error).message}); defaults apply.` };
  }
}

export interface EffectiveSettings extends UserSettings {
  /** The service's office LAN mode (HTTPS, `courtier lan`) is allowed; the service reads the same policy file. */
  lanSharingAllowed: boolean;
  /** The IT policy switched the robots off: the install-wide kill switch is on and the tray cannot lift it. */
  robotsDisabledByPolicy: boolean;
  hostedSyncUrl: string | undefined;
  autoUpdate: { enabled: boolean; channel: UserSettings['updateChannel']; url: string | undefined };
  /** The settings the policy decides, which the tray shows as locked. */
  managed: ReadonlyArray<'publicBaseUrl' | 'lanSharing' | 'sandbox' | 'robotsDisabled' | 'hostedSyncUrl' | 'updateChannel' | 'autoUpdate'>;
}

/** The settings in force: the broker's, with the IT policy's fields winning. */
export function effectiveSettings(user: UserSettings, policy: Policy): EffectiveSettings {
  const managed: EffectiveSettings['managed'][number][] = [];
  const lanSharingAllowed = policy.allowLanSharing ?? true;
  if (policy.allowLanSharing === false) managed.push('lanSharing');
  if (policy.publicBaseUrl !== undefined) managed.push('publicBaseUrl');
  if (policy.sandbox !== undefined) managed.push('sandbox');
  if (policy.robotsDisabled === true) managed.push('robotsDisabled');
  if (policy.hostedSyncUrl !== undefined) managed.push('hostedSyncUrl');
  if (policy.autoUpdate?.channel !== undefined) managed.push('updateChannel');
  if (policy.autoUpdate !== undefined) managed.push('autoUpdate');
  const channel = policy.autoUpdate?.channel ?? user.updateChannel;
  return {
    ...user,
    lanSharingAllowed,
    robotsDisabledByPolicy: policy.robotsDisabled === true,
    publicBaseUrl: policy.publicBaseUrl ?? user.publicBaseUrl,
    sandbox: policy.sandbox ?? user.sandbox,
    hostedSyncUrl: policy.hostedSyncUrl,
    updateChannel: channel,
    autoUpdate: { enabled: policy.autoUpdate?.enabled ?? true, channel, url: policy.autoUpdate?.url },
    managed,
  };
}

/** Variables a desktop server must never inherit from the shell's own environment. */
const CONTROLLED = [
  'COURTIER_HOST',
  'COURTIER_PORT',
  'COURTIER_DATA_DIR',
  'COURTIER_PUBLIC_BASE_URL',
  'COURTIER_SANDBOX',
  'COURTIER_ROBOTS_HEADED',
  'COURTIER_ROBOTS_DISABLED',
  'COURTIER_DESKTOP_LOGIN_TOKEN_SHA256',
  // The machine's policy file, the one the shell read: a user's environment must not point elsewhere.
  'COURTIER_POLICY_FILE',
  // Node options are off in the packaged app (fuses); never passed to the server in development either.
  'NODE_OPTIONS',
  'ELECTRON_RUN_AS_NODE',
] as const;

/**
 * The environment of the server's utility process: the shell's environment, minus what the
 * desktop decides, plus the desktop's choices. Loopback on a free (or last used) port unless the
 * policy allows and the broker chose LAN sharing.
 */
export function serverEnvironment(
  base: NodeJS.ProcessEnv,
  settings: EffectiveSettings,
  options: { dataDir: string; loginTokenSha256: string; policyFile: string },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base))
    if (value !== undefined && !(CONTROLLED as readonly string[]).includes(name)) env[name] = value;
  // Loopback only: the office shares the service through its LAN mode (HTTPS, its own listener).
  env.COURTIER_HOST = '127.0.0.1';
  env.COURTIER_PORT = String(settings.lastPort);
  env.COURTIER_DATA_DIR = options.dataDir;
  env.COURTIER_POLICY_FILE = options.policyFile;
  env.COURTIER_SANDBOX = String(settings.sandbox);
  env.COURTIER_ROBOTS_HEADED = String(settings.robotsHeaded);
  if (settings.robotsDisabledByPolicy) env.COURTIER_ROBOTS_DISABLED = 'true';
  env.COURTIER_DESKTOP_LOGIN_TOKEN_SHA256 = options.loginTokenSha256;
  if (settings.publicBaseUrl) env.COURTIER_PUBLIC_BASE_URL = settings.publicBaseUrl;
  return env;
}
