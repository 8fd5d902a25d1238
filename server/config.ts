import { z } from 'zod';
import { ipRuleSchema } from '../shared/api-keys.js';
import { defaultDataDir } from './paths.js';
import { policyFilePath } from './policy.js';

const booleanFromString = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])])
  .transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');

/**
 * COURTIER_TRUST_PROXY: which hops may tell the client's address and protocol (X-Forwarded-For,
 * X-Forwarded-Proto). `false` (also `no`, `0`: no proxy): none, the connection's address is the
 * client's. A positive whole number: that many hops, whoever sent them. A comma-separated list of
 * addresses and CIDR blocks: exactly those proxies. `true` is refused: it would let any client
 * claim any address.
 */
export type TrustProxy = false | number | string[];

const TRUST_PROXY_FORMS =
  'give the number of proxies in front of Courtier (e.g. 1) or, better, their addresses (e.g. 127.0.0.1 or 10.0.0.0/24, comma-separated)';

export const trustProxySchema = z.union([z.boolean(), z.number(), z.string(), z.array(z.string())]).transform((value, ctx): TrustProxy => {
  const refuse = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  if (value === true || (typeof value === 'string' && ['true', 'yes'].includes(value.trim().toLowerCase()))) {
    return refuse(
      `"${String(value).trim()}" would trust X-Forwarded-For from every client, who could then pass for any address (API-key allowlists, sign-in limits); ${TRUST_PROXY_FORMS}`,
    );
  }
  if (value === false || (typeof value === 'string' && ['false', 'no', '0'].includes(value.trim().toLowerCase()))) return false;
  if (typeof value === 'number' || (typeof value === 'string' && /^\s*\d+\s*$/.test(value))) {
    const hops = Number(value);
    if (!Number.isSafeInteger(hops) || hops < 0 || hops > 100)
      return refuse(`a number of proxies must be a whole number from 0 to 100; ${TRUST_PROXY_FORMS}`);
    return hops === 0 ? false : hops;
  }
  const entries = (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter(Boolean);
  const invalid = entries.filter((entry) => !ipRuleSchema.safeParse(entry).success);
  if (entries.length === 0 || invalid.length > 0) {
    const problem =
      invalid.length === 0
        ? 'no proxy address is given'
        : `${invalid.map((i) => `"${i}"`).join(', ')} ${invalid.length === 1 ? 'is' : 'are'} not an IP address or CIDR block`;
    return refuse(`${problem}; ${TRUST_PROXY_FORMS}`);
  }
  // A block as wide as 0.0.0.0/0 would be `true` under another name.
  const tooWide = entries.filter(isTooWideBlock);
  if (tooWide.length > 0) {
    return refuse(
      `${tooWide.map((i) => `"${i}"`).join(', ')} would trust a large part of the internet (a block may be /8 at the widest); ${TRUST_PROXY_FORMS}`,
    );
  }
  return entries;
});

/** Wider than /8 (10.0.0.0/8, fd00::/8 are the widest private blocks). */
function isTooWideBlock(entry: string): boolean {
  const slash = entry.lastIndexOf('/');
  return slash !== -1 && Number(entry.slice(slash + 1)) < 8;
}

const listFromString = z
  .union([z.array(z.union([z.string(), z.number()])), z.string()])
  .transform((v) => (Array.isArray(v) ? v.map(String) : v.split(',')).map((s) => s.trim()).filter(Boolean));

/** The whole configuration, from flags and COURTIER_* environment variables (flags win). */
const configSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8787),
  dataDir: z.string().min(1),
  /** Where clients reach the service, when it is not http://<host>:<port> (a reverse proxy, a LAN name). */
  publicBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** Browser origins allowed to call the API cross-origin. */
  corsOrigins: listFromString.pipe(z.array(z.url({ protocol: /^https?$/ }))).default([]),
  rateLimitPerMinute: z.coerce.number().int().min(1).max(1_000_000).default(600),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Proxies whose X-Forwarded-For and X-Forwarded-Proto are believed; see TrustProxy. */
  trustProxy: trustProxySchema.default(false),
  /** Seconds before each webhook attempt: the first is the delay of the first attempt (0 = at once). */
  webhookRetryDelays: listFromString
    .pipe(z.array(z.string().regex(/^\d+$/, 'each delay is a whole number of seconds').transform(Number)).min(1).max(20))
    .default([0, 30, 300, 1800, 7200, 43200]),
  /** Lets webhooks reach loopback, private and link-local addresses (a receiver on the office LAN). */
  webhookAllowPrivateTargets: booleanFromString.default(false),
  webhookTimeoutMs: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /**
   * Deliveries in flight, overall and per subscription. A busy subscription needs many at once when
   * each round trip waits its turn on a busy dispatcher (BENCHMARKS.md, webhooks); one slow
   * endpoint still holds at most a quarter of the slots.
   */
  webhookConcurrency: z.coerce.number().int().min(1).max(500).default(64),
  webhookConcurrencyPerEndpoint: z.coerce.number().int().min(1).max(100).default(16),
  /** Robot credits per run of a product of kind quote / routine. */
  creditsPerQuote: z.coerce.number().int().min(0).max(100_000).default(10),
  creditsPerRoutine: z.coerce.number().int().min(0).max(100_000).default(4),
  /** Real tarifications per cabinet per sliding hour. */
  tarificationQuotaPerHour: z.coerce.number().int().min(1).max(1_000_000).default(60),
  /**
   * With sync on: the credits this install may spend (net of refunds) that the cabinet's hub has
   * not acknowledged yet, and the real tarifications it may enqueue since a pull last brought it the
   * other installs' jobs. Each bounds what the cabinet's installs can spend or send beyond its wallet or its hourly
   * quota together: this much per install (docs/SYNC.md, Credits).
   */
  offlineCreditsAllowance: z.coerce.number().int().min(0).max(100_000).default(50),
  offlineQuotaAllowance: z.coerce.number().int().min(1).max(1_000_000).default(10),
  /** Robots running at once in this process (at most one per insurer login whatever this says). */
  workerConcurrency: z.coerce.number().int().min(1).max(64).default(2),
  /** The kill switch from configuration; `courtier robots disable` sets it at run time. */
  robotsDisabled: booleanFromString.default(false),
  /** How long a worker's claim on a job lasts without a heartbeat: after a crash, jobs are recovered after this. */
  jobLeaseSeconds: z.coerce.number().int().min(2).max(600).default(15),
  /** The browser the robots drive; by default the system's Chrome or Edge, or Debian's Chromium. */
  browserPath: z.string().min(1).optional(),
  /** Show the robots' browser window (to watch a robot, or to help it with a captcha). */
  robotsHeaded: booleanFromString.default(false),
  /** Serve the sandbox insurer portal under /sandbox/insurer/ and price with it. */
  sandbox: booleanFromString.default(true),
  sandboxMode: z.enum(['normal', 'slow', 'flaky', 'down', 'changed']).default('normal'),
  /** The sandbox portal's think time per page in slow mode. */
  sandboxLatencyMs: z.coerce.number().int().min(0).max(60_000).default(1500),
  /** Dynamic OAuth client registrations accepted per client address per hour. */
  oauthRegistrationsPerHour: z.coerce.number().int().min(1).max(100_000).default(20),
  /**
   * The desktop app's one-time sign-in: the SHA-256 (hex) of a token the Electron main process
   * hands over, accepted once at /console/desktop-login within two minutes of the start.
   */
  desktopLoginTokenSha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'a SHA-256 as 64 hex characters')
    .transform((v) => v.toLowerCase())
    .optional(),
  /** The IT policy file (allowLanSharing, lan presets); by default the platform's machine-wide path. */
  policyFile: z.string().min(1),
  /** How often the running service re-reads the LAN settings and the machine's addresses. */
  lanCheckIntervalMs: z.coerce.number().int().min(50).max(600_000).default(5000),
});
export type Config = z.infer<typeof configSchema>;

/** Environment variable of each setting; the README's configuration table lists the same. */
const CONFIG_ENV: Record<keyof Config, string> = {
  host: 'COURTIER_HOST',
  port: 'COURTIER_PORT',
  dataDir: 'COURTIER_DATA_DIR',
  publicBaseUrl: 'COURTIER_PUBLIC_BASE_URL',
  corsOrigins: 'COURTIER_CORS_ORIGINS',
  rateLimitPerMinute: 'COURTIER_RATE_LIMIT_PER_MINUTE',
  logLevel: 'COURTIER_LOG_LEVEL',
  trustProxy: 'COURTIER_TRUST_PROXY',
  webhookRetryDelays: 'COURTIER_WEBHOOK_RETRY_DELAYS',
  webhookAllowPrivateTargets: 'COURTIER_WEBHOOK_ALLOW_PRIVATE_TARGETS',
  webhookTimeoutMs: 'COURTIER_WEBHOOK_TIMEOUT_MS',
  webhookConcurrency: 'COURTIER_WEBHOOK_CONCURRENCY',
  webhookConcurrencyPerEndpoint: 'COURTIER_WEBHOOK_CONCURRENCY_PER_ENDPOINT',
  creditsPerQuote: 'COURTIER_CREDITS_PER_QUOTE',
  creditsPerRoutine: 'COURTIER_CREDITS_PER_ROUTINE',
  tarificationQuotaPerHour: 'COURTIER_TARIFICATION_QUOTA_PER_HOUR',
  offlineCreditsAllowance: 'COURTIER_OFFLINE_CREDITS_ALLOWANCE',
  offlineQuotaAllowance: 'COURTIER_OFFLINE_QUOTA_ALLOWANCE',
  workerConcurrency: 'COURTIER_WORKER_CONCURRENCY',
  robotsDisabled: 'COURTIER_ROBOTS_DISABLED',
  jobLeaseSeconds: 'COURTIER_JOB_LEASE_SECONDS',
  browserPath: 'COURTIER_BROWSER_PATH',
  robotsHeaded: 'COURTIER_ROBOTS_HEADED',
  sandbox: 'COURTIER_SANDBOX',
  sandboxMode: 'COURTIER_SANDBOX_MODE',
  sandboxLatencyMs: 'COURTIER_SANDBOX_LATENCY_MS',
  oauthRegistrationsPerHour: 'COURTIER_OAUTH_REGISTRATIONS_PER_HOUR',
  desktopLoginTokenSha256: 'COURTIER_DESKTOP_LOGIN_TOKEN_SHA256',
  policyFile: 'COURTIER_POLICY_FILE',
  lanCheckIntervalMs: 'COURTIER_LAN_CHECK_INTERVAL_MS',
};

export function loadConfig(flags: Partial<Record<keyof Config, unknown>>, env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(CONFIG_ENV)) {
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv !== '') raw[field] = fromEnv;
  }
  for (const [field, value] of Object.entries(flags)) if (value !== undefined) raw[field] = value;
  raw.dataDir ??= defaultDataDir(env);
  raw.policyFile ??= policyFilePath(process.platform, env);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const field = String(i.path[0] ?? '');
      const name = CONFIG_ENV[field as keyof Config] ?? field;
      return `${name}: ${i.message}`;
    });
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
