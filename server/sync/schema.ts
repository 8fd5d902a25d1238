import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core';
import { cabinets } from '../tenancy/schema.js';

/**
 * A cabinet's link to its hub. Its row is what "sync is on" means: changes are captured into the
 * outbox only while it exists. The device's secret is in the secret store, never here.
 */
export const syncConnections = sqliteTable('sync_connections', {
  cabinetId: text('cabinet_id')
    .primaryKey()
    .references(() => cabinets.id),
  hubUrl: text('hub_url').notNull(),
  deviceId: text('device_id').notNull(),
  deviceName: text('device_name').notNull(),
  paused: integer('paused', { mode: 'boolean' }).notNull().default(false),
  /** The number the next captured change gets (consecutive per device, as the hub expects). */
  nextNumber: integer('next_number').notNull(),
  /** Every change up to this number is stored on the hub. */
  acknowledgedNumber: integer('acknowledged_number').notNull(),
  /** The last hub seq applied here; it moves in the transaction that applies the changes. */
  pullCursor: integer('pull_cursor').notNull(),
  /** The hybrid logical clock's last value: wall ms and counter. */
  clockTime: integer('clock_time').notNull(),
  clockCounter: integer('clock_counter').notNull(),
  /** The latest wall time of a change pulled from another device: a re-stamped change must come after it. */
  remoteClockTime: integer('remote_clock_time').notNull().default(0),
  /** What the syncing service last saw: idle, syncing, offline or error, with the error in words. */
  state: text('state', { enum: ['idle', 'syncing', 'offline', 'error'] }).notNull(),
  lastError: text('last_error'),
  lastErrorCode: text('last_error_code'),
  lastErrorAt: integer('last_error_at'),
  /** When the hub was first unreachable in the current outage. */
  offlineSince: integer('offline_since'),
  /** Hub clock minus ours at the last answer, in ms. */
  hubClockOffset: integer('hub_clock_offset'),
  lastPushAt: integer('last_push_at'),
  lastPullAt: integer('last_pull_at'),
  connectedAt: integer('connected_at').notNull(),
});

/** Changes made here and not yet acknowledged by the hub, written in the transaction of the change. */
export const syncOutbox = sqliteTable(
  'sync_outbox',
  {
    cabinetId: text('cabinet_id').notNull(),
    number: integer('number').notNull(),
    kind: text('kind').notNull(),
    recordId: text('record_id').notNull(),
    op: text('op', { enum: ['upsert', 'erase'] }).notNull(),
    hlc: text('hlc').notNull(),
    /** JSON: column name → value. */
    fields: text('fields').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.number] })],
);

/**
 * Per record, the clock of each field's current value (last writer wins per field) and whether it
 * was erased (an erasure wins over every edit).
 */
export const syncFieldClocks = sqliteTable(
  'sync_field_clocks',
  {
    cabinetId: text('cabinet_id').notNull(),
    kind: text('kind').notNull(),
    recordId: text('record_id').notNull(),
    /** JSON: column name → HLC. */
    clocks: text('clocks').notNull(),
    erased: integer('erased', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.kind, t.recordId] })],
);
