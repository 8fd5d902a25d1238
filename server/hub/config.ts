import { z } from 'zod';
import { ConfigError, trustProxySchema } from '../config.js';
import { DEFAULT_RETENTION, type Retention } from './compaction.js';
import { DEFAULT_HUB_LIMITS, type HubLimits } from './deps.js';

const MB = 1024 * 1024;

/**
 * The hub's configuration: flags win over COURTIER_HUB_* variables. Nothing of the agent's (no data
 * dir, no secrets): the hub's whole state is its PostgreSQL database.
 */
const hubConfigSchema = z.object({
  databaseUrl: z
    .string({ error: 'required: the hub’s PostgreSQL, e.g. postgres://courtier@db.internal/courtier_hub' })
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// URL'),
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8790),
  /** Behind a reverse proxy (TLS ends there), its address: the pairing throttle counts per client address. */
  trustProxy: trustProxySchema.default(false),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Per cabinet: changes and their fields' megabytes, PDFs and their megabytes, credits entries (DEFAULT_HUB_LIMITS). */
  cabinetMaxChanges: z.coerce.number().int().min(1).default(DEFAULT_HUB_LIMITS.cabinetChanges),
  cabinetMaxChangesMb: z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULT_HUB_LIMITS.cabinetChangeBytes / MB),
  cabinetMaxBlobs: z.coerce.number().int().min(1).default(DEFAULT_HUB_LIMITS.cabinetBlobs),
  cabinetMaxBlobsMb: z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULT_HUB_LIMITS.cabinetBlobBytes / MB),
  cabinetMaxWalletEntries: z.coerce.number().int().min(1).default(DEFAULT_HUB_LIMITS.cabinetWalletEntries),
  /** Retention (compaction.ts): changes of the last days, or the newest of each cabinet, whichever keeps more; PDFs no record names after their grace. */
  retainDays: z.coerce.number().int().min(0).default(DEFAULT_RETENTION.days),
  retainChanges: z.coerce.number().int().min(1).default(DEFAULT_RETENTION.changes),
  blobGraceHours: z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULT_RETENTION.blobGraceMs / 3600_000),
  /** How often `hub serve` compacts every cabinet; 0: never (`courtier hub compact` only). */
  compactEveryMinutes: z.coerce.number().int().min(0).default(60),
});
export type HubConfig = z.infer<typeof hubConfigSchema>;

const HUB_ENV: Record<keyof HubConfig, { env: string; flag?: string }> = {
  databaseUrl: { env: 'COURTIER_HUB_DATABASE_URL', flag: '--database-url' },
  host: { env: 'COURTIER_HUB_HOST', flag: '--host' },
  port: { env: 'COURTIER_HUB_PORT', flag: '--port' },
  trustProxy: { env: 'COURTIER_HUB_TRUST_PROXY', flag: '--trust-proxy' },
  logLevel: { env: 'COURTIER_LOG_LEVEL' },
  cabinetMaxChanges: { env: 'COURTIER_HUB_CABINET_MAX_CHANGES' },
  cabinetMaxChangesMb: { env: 'COURTIER_HUB_CABINET_MAX_CHANGES_MB' },
  cabinetMaxBlobs: { env: 'COURTIER_HUB_CABINET_MAX_BLOBS' },
  cabinetMaxBlobsMb: { env: 'COURTIER_HUB_CABINET_MAX_BLOBS_MB' },
  cabinetMaxWalletEntries: { env: 'COURTIER_HUB_CABINET_MAX_WALLET_ENTRIES' },
  retainDays: { env: 'COURTIER_HUB_RETAIN_DAYS' },
  retainChanges: { env: 'COURTIER_HUB_RETAIN_CHANGES' },
  blobGraceHours: { env: 'COURTIER_HUB_BLOB_GRACE_HOURS' },
  compactEveryMinutes: { env: 'COURTIER_HUB_COMPACT_EVERY_MINUTES' },
};

/** The quotas of the configuration, as the hub's services take them. */
export function hubLimitsOf(config: HubConfig): Partial<HubLimits> {
  return {
    cabinetChanges: config.cabinetMaxChanges,
    cabinetChangeBytes: config.cabinetMaxChangesMb * MB,
    cabinetBlobs: config.cabinetMaxBlobs,
    cabinetBlobBytes: config.cabinetMaxBlobsMb * MB,
    cabinetWalletEntries: config.cabinetMaxWalletEntries,
  };
}

/** The retention of the configuration, as compaction takes it. */
export function retentionOf(config: HubConfig): Retention {
  return { days: config.retainDays, changes: config.retainChanges, blobGraceMs: config.blobGraceHours * 3600_000 };
}

export function loadHubConfig(flags: Partial<Record<keyof HubConfig, string | undefined>>, env: NodeJS.ProcessEnv): HubConfig {
  const raw: Record<string, unknown> = {};
  for (const [field, { env: name }] of Object.entries(HUB_ENV)) {
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv !== '') raw[field] = fromEnv;
  }
  for (const [field, value] of Object.entries(flags)) if (value !== undefined) raw[field] = value;
  const parsed = hubConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const names = HUB_ENV[String(issue.path[0]) as keyof HubConfig];
      return `${names?.flag ? `${names.flag} (${names.env})` : (names?.env ?? String(issue.path[0]))}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid hub configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}
