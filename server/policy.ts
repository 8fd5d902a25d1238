import { win32, posix } from 'node:path';
import { z } from 'zod';
import { lanAddressSchema, lanNameSchema, lanPortSchema } from '../shared/lan.js';

/**
 * The IT policy: one machine-wide JSON file, written by IT (GPO, MDM, a deployment script), read at
 * every start. What it sets wins over the broker's own settings. No part of the desktop app writes it.
 */
export const UPDATE_CHANNELS = ['latest', 'beta', 'alpha'] as const;

const httpUrl = z.url({ protocol: /^https?$/, error: 'an http(s) URL' });
const httpsUrl = z.url({ protocol: /^https$/, error: 'an https URL' });

/** Each field is optional: a missing field leaves the broker's setting (or the default) alone. */
const policyFields = {
  /** COURTIER_PUBLIC_BASE_URL: the URL clients use (a LAN name, a reverse proxy). */
  publicBaseUrl: httpUrl,
  /** false: the service stays on 127.0.0.1 whatever the broker chooses; true: the broker may share it on the LAN. */
  allowLanSharing: z.boolean(),
  /**
   * The office LAN mode preset by IT: what it sets cannot be changed from the console or the CLI.
   * An IT-provided certificate and key (PEM files) replace the office CA's and are never regenerated.
   */
  lan: z
    .strictObject({
      enabled: z.boolean().optional(),
      port: lanPortSchema.optional(),
      addresses: z.array(lanAddressSchema).max(16).optional(),
      names: z.array(lanNameSchema).max(16).optional(),
      certificateFile: z.string().min(1).optional(),
      keyFile: z.string().min(1).optional(),
    })
    .refine((lan) => (lan.certificateFile === undefined) === (lan.keyFile === undefined), 'certificateFile and keyFile go together'),
  /** COURTIER_SANDBOX: serve the sandbox insurer (demos, test keys) or not. */
  sandbox: z.boolean(),
  /** true: COURTIER_ROBOTS_DISABLED, the install-wide kill switch, on; the tray cannot resume the robots. */
  robotsDisabled: z.boolean(),
  /** The hosted sync service this office uses. */
  hostedSyncUrl: httpsUrl,
  /**
   * Insurer adapters installed on this machine: requireSigned refuses any that is not signed by one
   * of trustedKeys (ed25519 public keys in PEM). Built-in insurers are part of the application.
   */
  adapters: z.strictObject({
    requireSigned: z.boolean(),
    trustedKeys: z.array(z.string().min(1).max(1000)).max(32).default([]),
  }),
  /** Automatic updates: on or off, the channel, and the generic (static HTTPS) feed they come from. */
  autoUpdate: z.strictObject({
    enabled: z.boolean().optional(),
    channel: z.enum(UPDATE_CHANNELS).optional(),
    url: httpsUrl.optional(),
  }),
} as const;

const autoUpdateFields = {
  enabled: z.boolean(),
  channel: z.enum(UPDATE_CHANNELS),
  url: httpsUrl,
} as const;

const policySchema = z.strictObject({
  publicBaseUrl: policyFields.publicBaseUrl.optional(),
  allowLanSharing: policyFields.allowLanSharing.optional(),
  lan: policyFields.lan.optional(),
  sandbox: policyFields.sandbox.optional(),
  robotsDisabled: policyFields.robotsDisabled.optional(),
  hostedSyncUrl: policyFields.hostedSyncUrl.optional(),
  adapters: policyFields.adapters.optional(),
  autoUpdate: policyFields.autoUpdate.optional(),
});
export type Policy = z.infer<typeof policySchema>;

/** Where IT puts the policy file on each platform. */
export function policyFilePath(platform: NodeJS.Platform, env: NodeJS.ProcessEnv = {}): string {
  if (platform === 'win32') return win32.join(env.ProgramData ?? env.PROGRAMDATA ?? 'C:\\ProgramData', 'Courtier', 'policy.json');
  if (platform === 'darwin') return posix.join('/Library', 'Application Support', 'Courtier', 'policy.json');
  return posix.join('/etc', 'courtier', 'policy.json');
}

export interface LoadedPolicy {
  /** The fields that were valid; {} when there is no file or it could not be used. */
  policy: Policy;
  path: string;
  /** Whether a policy file exists (managed install). */
  present: boolean;
  /** What was wrong, one line each, for the log, the tray and the console. Empty when all is well. */
  problems: string[];
}

/** Policy files are small; anything bigger is not one. */
export const MAX_POLICY_BYTES = 64 * 1024;

export interface PolicyFileSystem {
  /** The file's bytes, or throws (ENOENT when there is none). */
  readFile(path: string): Buffer | string;
}

/**
 * Reads and validates the policy. It never throws: no file is no policy; an unreadable file or
 * invalid JSON gives no policy and a problem; an invalid or unknown field is dropped with a problem
 * while the valid fields still apply (so one typo never lifts a restriction such as allowLanSharing).
 */
export function loadPolicy(fs: PolicyFileSystem, path: string): LoadedPolicy {
  let raw: Buffer | string;
  try {
    raw = fs.readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { policy: {}, path, present: false, problems: [] };
    return { policy: {}, path, present: true, problems: [`${path}: cannot be read (${code ?? (err as Error).message}); defaults apply.`] };
  }
  return parsePolicy(raw, path);
}

export function parsePolicy(raw: Buffer | string, path: string): LoadedPolicy {
  const base = { path, present: true };
  if (raw.length > MAX_POLICY_BYTES)
    return { ...base, policy: {}, problems: [`${path}: larger than ${MAX_POLICY_BYTES} bytes; ignored, defaults apply.`] };
  let text = typeof raw === 'string' ? raw : raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // Notepad's UTF-8 BOM
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ...base, policy: {}, problems: [`${path}: not valid JSON (${(err as Error).message}); defaults apply.`] };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ...base, policy: {}, problems: [`${path}: must hold a JSON object; defaults apply.`] };
  }
  const problems: string[] = [];
  const policy = pickValid(json as Record<string, unknown>, policyFields, '', path, problems);
  // autoUpdate is checked field by field too: a bad url must not drop "enabled": false.
  const autoUpdate = (json as Record<string, unknown>).autoUpdate;
  if (typeof autoUpdate === 'object' && autoUpdate !== null && !Array.isArray(autoUpdate) && !('autoUpdate' in policy)) {
    policy.autoUpdate = pickValid(autoUpdate as Record<string, unknown>, autoUpdateFields, 'autoUpdate.', path, problems);
  } else if ('autoUpdate' in (json as object) && !('autoUpdate' in policy)) {
    problems.push(`${path}: "autoUpdate" ignored (must be an object).`);
  }
  // An "adapters" setting that does not parse still requires signed adapters: a typo never lets unsigned code in.
  if ('adapters' in (json as object) && !('adapters' in policy)) policy.adapters = { requireSigned: true, trustedKeys: [] };
  return { ...base, policy: policySchema.parse(policy), problems };
}

function pickValid(
  json: Record<string, unknown>,
  fields: Record<string, z.ZodType>,
  prefix: string,
  path: string,
  problems: string[],
): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    const schema = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (!schema) {
      problems.push(
        `${path}: unknown setting "${prefix}${key}" ignored (known: ${Object.keys(fields)
          .map((k) => prefix + k)
          .join(', ')}).`,
      );
      continue;
    }
    if (prefix === '' && key === 'autoUpdate') {
      const whole = schema.safeParse(value);
      if (whole.success) picked[key] = whole.data;
      continue; // otherwise checked field by field by the caller
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) picked[key] = parsed.data;
    else {
      const detail = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
      problems.push(`${path}: "${prefix}${key}" ignored (${detail}).`);
    }
  }
  return picked;
}
