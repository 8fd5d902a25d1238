import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

/**
 * The office LAN mode's contract: its state as the console, `courtier lan status --json` and the
 * OpenAPI document show it, the change an admin at the machine asks for, and the CA download.
 */

export const DEFAULT_LAN_PORT = 8443;

/** A DNS name a certificate can carry: labels of letters, digits and hyphens, at most 253 characters. */
export const lanNameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/,
    'must be a DNS name such as courtier.cabinet.lan (letters, digits, hyphens and dots)',
  );

export const lanAddressSchema = z.union([z.ipv4(), z.ipv6()], { error: 'must be an IPv4 or IPv6 address such as 192.168.1.20' });

export const lanPortSchema = z
  .number()
  .int()
  .min(1)
  .max(65535)
  .refine((port) => port !== 80, 'port 80 is plain HTTP’s: browsers would not speak HTTPS there; use another, such as 8443');

const lanStatusSchema = z.object({
  enabled: z.boolean(),
  /** false when the IT policy forbids LAN sharing (allowLanSharing: false). */
  allowed: z.boolean(),
  /** The IT policy presets LAN mode: it cannot be changed here. */
  managed_by_policy: z.boolean(),
  port: lanPortSchema,
  /** The URLs colleagues open: by name first, then by address. */
  urls: z.array(z.string()),
  /** The addresses the listener serves (or would serve, when off). */
  addresses: z.array(z.string()),
  /** Further names given with --name. */
  names: z.array(z.string()),
  ca_fingerprint_sha256: z.string().nullable(),
  certificate: z
    .object({
      source: z.enum(['generated', 'provided']),
      names: z.array(z.string()),
      addresses: z.array(z.string()),
      not_after: z.iso.datetime(),
      fingerprint_sha256: z.string(),
    })
    .nullable(),
  /** What keeps LAN mode from working as asked, in words (an address gone, a port taken). */
  problems: z.array(z.string()),
});
export type LanStatus = z.infer<typeof lanStatusSchema>;

/** The console's view: the same, and whether this browser may switch it (it is on the machine itself). */
const consoleLanStatusSchema = lanStatusSchema.extend({ changeable_here: z.boolean() });

export const lanChangeSchema = z.strictObject({
  enabled: z.boolean(),
  addresses: z.array(lanAddressSchema).max(16).optional(),
  port: lanPortSchema.optional(),
  names: z.array(lanNameSchema).max(16).optional(),
});
export type LanChange = z.infer<typeof lanChangeSchema>;

const TAG = 'Console: office LAN';

export const getLanStatus = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/lan',
  operationId: 'consoleGetLanStatus',
  summary: 'The office LAN mode: on or off, its URLs and certificate',
  tag: TAG,
  auth: 'console_admin',
  responses: { 200: { description: 'The LAN mode’s state.', schema: consoleLanStatusSchema } },
  errors: [],
});

export const changeLan = defineEndpoint({
  method: 'PUT',
  surface: 'console',
  path: '/lan',
  operationId: 'consoleChangeLan',
  summary: 'Switch the office LAN mode on or off (from the machine itself)',
  description:
    'Accepted only from a browser on the machine that runs Courtier (over loopback): a colleague on the LAN cannot widen or narrow what the office exposes. Takes effect at once, without a restart.',
  tag: TAG,
  auth: 'console_admin',
  body: lanChangeSchema,
  responses: { 200: { description: 'The LAN mode’s new state.', schema: consoleLanStatusSchema } },
  errors: ['local_only', 'lan_sharing_forbidden', 'lan_managed_by_policy', 'lan_address_unavailable', 'lan_name_outside_ca'],
});

export const downloadCaCertificate = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/ca.crt',
  operationId: 'downloadCaCertificate',
  summary: 'The office certificate authority, to trust on a broker’s machine',
  description:
    'PEM. Compare its SHA-256 fingerprint with the one the console and `courtier lan status` show at the office machine before trusting it. Open on the LAN listener without signing in.',
  tag: 'Meta',
  auth: 'none',
  openOnLan: true,
  responses: {
    200: { description: 'The CA certificate (PEM).', contentType: 'application/x-pem-file' },
    404: { description: 'LAN mode was never enabled: there is no CA.' },
  },
  errors: ['not_found'],
});

const lanAddressBlockSchema = z.object({
  address: z.string(),
  blocked_at: z.iso.datetime(),
  blocked_until: z.iso.datetime(),
  /** Failed sign-ins from it in the throttle's window. */
  failures: z.number().int(),
});
export type LanAddressBlock = z.infer<typeof lanAddressBlockSchema>;

export const listLanBlocks = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/lan/blocks',
  operationId: 'consoleListLanBlocks',
  summary: 'Addresses blocked on the office LAN after failed sign-ins',
  description:
    'An address that reaches the sign-in limit on the LAN listener (20 failures in 15 minutes) is refused there for an hour, whatever it asks. Loopback is never blocked.',
  tag: TAG,
  auth: 'console_admin',
  responses: { 200: { description: 'The blocks in force, newest first.', schema: z.object({ data: z.array(lanAddressBlockSchema) }) } },
  errors: [],
});

export const liftLanBlock = defineEndpoint({
  method: 'DELETE',
  surface: 'console',
  path: '/lan/blocks/{address}',
  operationId: 'consoleLiftLanBlock',
  summary: 'Lift the block of an address',
  tag: TAG,
  auth: 'console_admin',
  params: z.object({ address: lanAddressSchema }),
  responses: { 204: { description: 'Lifted; recorded in the audit log.' } },
  errors: ['not_found'],
});

export const CONSOLE_LAN_ENDPOINTS = [getLanStatus, changeLan, downloadCaCertificate, listLanBlocks, liftLanBlock] as const;
