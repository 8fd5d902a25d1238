import { sqliteTable, text, integer } from 'drizzle-orm/sqlite-core';

/**
 * The install's office LAN mode: one row (id 1). The certificates are public; their private keys
 * live in the install's secret store (the encrypted file store or the OS keychain), never here.
 */
export const lanSettings = sqliteTable('lan_settings', {
  id: integer('id').primaryKey(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull(),
  port: integer('port').notNull(),
  /** JSON array of the addresses to listen on, or null for every non-loopback IPv4 address of the machine. */
  addresses: text('addresses'),
  /** JSON array of further DNS names the certificate carries (--name). */
  names: text('names').notNull(),
  /** IT-provided PEM files, served as they are and never regenerated; null: the office CA's certificate. */
  providedCertificateFile: text('provided_certificate_file'),
  providedKeyFile: text('provided_key_file'),
  caCertificatePem: text('ca_certificate_pem'),
  /** JSON {names, addresses}: what the CA may certify beyond local suffixes and private ranges, fixed at its creation. */
  caConstraints: text('ca_constraints'),
  serverCertificatePem: text('server_certificate_pem'),
  updatedAt: integer('updated_at').notNull(),
});

/**
 * Addresses blocked on the office LAN listener after too many failed sign-ins: every request from
 * them there is refused until blocked_until, or until an admin lifts the block (the row goes).
 */
export const lanAddressBlocks = sqliteTable('lan_address_blocks', {
  address: text('address').primaryKey(),
  blockedAt: integer('blocked_at').notNull(),
  blockedUntil: integer('blocked_until').notNull(),
  /** The failed sign-ins that led to it, in the throttle's window. */
  failures: integer('failures').notNull(),
});
