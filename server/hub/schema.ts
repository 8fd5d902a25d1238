import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/**
 * The hub's tables in PostgreSQL. Every table but the pairing throttle is keyed by cabinet, and
 * every query names the cabinet: a device only ever reaches rows of its own cabinet.
 * Times are written from the hub's injected clock, never now() in SQL, so tests drive expiries.
 */

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });
const time = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const hubCabinets = pgTable('hub_cabinets', {
  /** The install's own cabinet id, so that records keep their ids on every install. */
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** The next seq to hand out; bumped under this row's lock, which makes commit order seq order. */
  nextSeq: bigint('next_seq', { mode: 'number' }).notNull().default(1),
  /**
   * Sent with every answer to the cabinet's devices; `courtier hub restored` gives a new one after
   * the database was restored from a backup, and the installs then start over with the hub.
   */
  epoch: text('epoch')
    .notNull()
    .default(sql`gen_random_uuid()::text`),
  /** The newest sync protocol a device of this cabinet spoke; one below it is still served. */
  highestProtocol: integer('highest_protocol').notNull(),
  /** What the cabinet's devices stored, for its quotas: changes, their fields' bytes, PDFs and their bytes. */
  changesCount: bigint('changes_count', { mode: 'number' }).notNull().default(0),
  changesBytes: bigint('changes_bytes', { mode: 'number' }).notNull().default(0),
  blobsCount: bigint('blobs_count', { mode: 'number' }).notNull().default(0),
  blobsBytes: bigint('blobs_bytes', { mode: 'number' }).notNull().default(0),
  /**
   * The oldest seq hub_changes still holds for the cabinet: compaction deleted those below, whose
   * effect hub_records keeps. A pull after a seq below it is answered 410 cursor_expired.
   */
  retainedFromSeq: bigint('retained_from_seq', { mode: 'number' }).notNull().default(1),
  /** The cabinet's one wallet: its balance and the next wallet seq, both moved under this row's lock with every entry. */
  walletBalance: bigint('wallet_balance', { mode: 'number' }).notNull().default(0),
  walletNextSeq: bigint('wallet_next_seq', { mode: 'number' }).notNull().default(1),
  /** The device that registered the cabinet: the only one whose opening balance the hub takes, once. */
  registeredBy: text('registered_by'),
  createdAt: time('created_at').notNull(),
});

export const hubDevices = pgTable(
  'hub_devices',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => hubCabinets.id),
    name: text('name').notNull(),
    /** SHA-256 (hex) of the secret; the secret itself is shown once, at pairing. */
    credentialHash: text('credential_hash').notNull(),
    /** The highest change number of this device the hub stored: its pushes continue from here. */
    lastNumber: bigint('last_number', { mode: 'number' }).notNull().default(0),
    revokedAt: time('revoked_at'),
    lastSeenAt: time('last_seen_at'),
    createdAt: time('created_at').notNull(),
  },
  (t) => [index('hub_devices_cabinet').on(t.cabinetId)],
);

export const hubInvites = pgTable(
  'hub_invites',
  {
    /** SHA-256 (hex) of the normalised code: a leaked table gives no usable code. */
    codeHash: text('code_hash').primaryKey(),
    /** A code that joins a cabinet the hub has: that cabinet. */
    cabinetId: text('cabinet_id').references(() => hubCabinets.id),
    /** A code that registers a new cabinet: the id the operator named; the install must bring that very cabinet. */
    registersCabinetId: text('registers_cabinet_id'),
    expiresAt: time('expires_at').notNull(),
    usedAt: time('used_at'),
    createdAt: time('created_at').notNull(),
  },
  (t) => [index('hub_invites_expires').on(t.expiresAt)],
);

/** Wrong pairing codes per address and fixed window, in the database so that every hub process counts the same. */
export const hubPairingFailures = pgTable(
  'hub_pairing_failures',
  {
    address: text('address').notNull(),
    windowStart: time('window_start').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.address, t.windowStart] })],
);

export const hubChanges = pgTable(
  'hub_changes',
  {
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => hubCabinets.id),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    deviceId: text('device_id')
      .notNull()
      .references(() => hubDevices.id),
    number: bigint('number', { mode: 'number' }).notNull(),
    kind: text('kind').notNull(),
    recordId: text('record_id').notNull(),
    op: text('op').notNull(),
    hlc: text('hlc').notNull(),
    fields: jsonb('fields').$type<Record<string, unknown>>().notNull(),
    /** The fields' size as JSON in UTF-8, as received: a pull page stops at a number of bytes without reading the fields. */
    bytes: integer('bytes').notNull().default(0),
    receivedAt: time('received_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.cabinetId, t.seq] }),
    // A device's change is stored once, whatever the retries.
    unique('hub_changes_device_number').on(t.cabinetId, t.deviceId, t.number),
    index('hub_changes_record').on(t.cabinetId, t.kind, t.recordId),
    check('hub_changes_op', sql`${t.op} in ('upsert', 'erase')`),
  ],
);

/**
 * Each record's current state: the fold of every change the hub stored of it, field by field by
 * the changes' stamps, as an install that applied them all holds it (server/hub/records.ts). Kept
 * in the push's transaction; a join reads it, then the changes after its as_of seq.
 */
export const hubRecords = pgTable(
  'hub_records',
  {
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => hubCabinets.id),
    kind: text('kind').notNull(),
    recordId: text('record_id').notNull(),
    /** Field → value, each the value of the change with the latest stamp for that field. */
    fields: jsonb('fields').$type<Record<string, unknown>>().notNull(),
    /** Field → the stamp (hlc) of its value. */
    stamps: jsonb('stamps').$type<Record<string, string>>().notNull(),
    /** An erase change of the record was stored: the fields are then its tombstones' only. */
    erased: boolean('erased').notNull().default(false),
    /** The seq and device of the newest change folded in. */
    lastSeq: bigint('last_seq', { mode: 'number' }).notNull(),
    deviceId: text('device_id').notNull(),
    /** The fields' and stamps' size as PostgreSQL writes them out: a state page stops at a number of bytes without reading them. */
    bytes: integer('bytes').notNull(),
    /**
     * A quote some change said signed (status, contract_id, signed_at) or a contract named: set by
     * the fold, never cleared, so that a later edit cannot make an erasure take it for unsigned
     * once compaction deleted the changes that said so.
     */
    signed: boolean('signed').notNull().default(false),
    /** The PDF a quote named once it was signed (the contract's proof): neither an erasure nor compaction deletes it. */
    signedPdf: text('signed_pdf'),
  },
  (t) => [
    primaryKey({ columns: [t.cabinetId, t.kind, t.recordId] }),
    // Whether any client of the cabinet was erased, asked on every push once one was.
    index('hub_records_erased')
      .on(t.cabinetId, t.kind)
      .where(sql`${t.erased}`),
  ],
);

/**
 * The cabinet's credits ledger, the authority every install mirrors: the operator's grants, each
 * install's debits and refunds of its own jobs, and the opening balance of the install that
 * registered the cabinet. A job is debited and refunded at most once per device, enforced by the
 * unique index; an entry sent again (a lost answer) is found by its id.
 */
export const hubWalletEntries = pgTable(
  'hub_wallet_entries',
  {
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => hubCabinets.id),
    /** The cabinet's wallet seq, allocated under its row's lock: commit order, a cursor for the installs. */
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** Made by the install (or the hub, for a grant). */
    entryId: text('entry_id').notNull(),
    kind: text('kind').notNull(),
    amount: integer('amount').notNull(),
    jobId: text('job_id'),
    /** Null for the operator's grants. */
    deviceId: text('device_id').references(() => hubDevices.id),
    note: text('note'),
    createdAt: time('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.cabinetId, t.seq] }),
    unique('hub_wallet_entries_entry').on(t.cabinetId, t.entryId),
    uniqueIndex('hub_wallet_entries_job_once')
      .on(t.cabinetId, t.deviceId, t.jobId, t.kind)
      .where(sql`${t.jobId} IS NOT NULL`),
    uniqueIndex('hub_wallet_entries_opening_once')
      .on(t.cabinetId)
      .where(sql`${t.kind} = 'opening'`),
    check('hub_wallet_entries_kind', sql`${t.kind} in ('grant', 'debit', 'refund', 'opening')`),
  ],
);

/**
 * What a client's erasure reached besides the client (shared/erasure.ts): the quotes, jobs and
 * opportunities that name it, whose personal fields the hub empties in every change it holds and in
 * every change that comes later; and (kind `blob`, the SHA-256) the PDFs of unsigned quotes it
 * deleted, which are not stored again. No personal data: kinds and ids.
 */
export const hubErasureLinks = pgTable(
  'hub_erasure_links',
  {
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => hubCabinets.id),
    kind: text('kind').notNull(),
    recordId: text('record_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.kind, t.recordId] })],
);

export const hubBlobs = pgTable(
  'hub_blobs',
  {
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => hubCabinets.id),
    sha256: text('sha256').notNull(),
    content: bytea('content').notNull(),
    size: integer('size').notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.sha256] })],
);

/**
 * The hub's own audit log: pairings (and refused attempts), revocations, devices leaving, and the
 * operator's commands. Append-only; each row sealed to the one before it (SHA-256 of the previous
 * seal and the row), in the order the rows were written, which a transaction-level advisory lock
 * makes one order across hub processes.
 */
export const hubAuditEvents = pgTable(
  'hub_audit_events',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: time('at').notNull(),
    action: text('action').notNull(),
    result: text('result').notNull(),
    /** operator (a `courtier hub` command), device (a device's own request), anonymous (pairing). */
    actorKind: text('actor_kind').notNull(),
    actorId: text('actor_id'),
    actorLabel: text('actor_label'),
    cabinetId: text('cabinet_id'),
    address: text('address'),
    target: text('target'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull(),
    seal: text('seal').notNull(),
  },
  (t) => [index('hub_audit_events_cabinet').on(t.cabinetId, t.seq)],
);
