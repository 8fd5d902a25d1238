import { blob, sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core';
import { cabinets } from '../tenancy/schema.js';
import { SYNC_OPS } from '../../shared/sync-protocol.js';

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
  /**
   * The latest wall time of this device's changes the hub acknowledged: a re-stamped change must come
   * after it, or a later edit would order before an earlier one (a device's stamps only grow).
   */
  acknowledgedClockTime: integer('acknowledged_clock_time').notNull().default(0),
  /** The latest wall time of a change pulled from another device: a re-stamped change must come after it. */
  remoteClockTime: integer('remote_clock_time').notNull().default(0),
  /** The hub's epoch at its last answer: a new one means the hub was restored from a backup, and this install starts over with it. */
  hubEpoch: text('hub_epoch'),
  /**
   * Set while this install pulls the cabinet's history again from the start, its own device's
   * changes included (it was restored from a backup, or the hub was); cleared once caught up.
   */
  resyncing: integer('resyncing', { mode: 'boolean' }).notNull().default(false),
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
  /** When a pull last reached the cabinet's newest change: this install knows the other installs' jobs up to then. */
  caughtUpAt: integer('caught_up_at'),
  connectedAt: integer('connected_at').notNull(),
});

/**
 * A cabinet that synced and was disconnected: its changes still get field clocks (no queue), from
 * this clock, stamped with the device it last was, so that a reconnect sends what changed here
 * meanwhile with when it changed, and nothing stale wins over edits made elsewhere.
 */
export const syncDetached = sqliteTable('sync_detached', {
  cabinetId: text('cabinet_id')
    .primaryKey()
    .references(() => cabinets.id),
  deviceId: text('device_id').notNull(),
  clockTime: integer('clock_time').notNull(),
  clockCounter: integer('clock_counter').notNull(),
});

/** Every hub device this install has been for a cabinet: field clocks stamped by one of them are this install's edits. */
export const syncOwnDevices = sqliteTable(
  'sync_own_devices',
  {
    cabinetId: text('cabinet_id').notNull(),
    deviceId: text('device_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.deviceId] })],
);

/** Changes made here and not yet acknowledged by the hub, written in the transaction of the change. */
export const syncOutbox = sqliteTable(
  'sync_outbox',
  {
    cabinetId: text('cabinet_id').notNull(),
    number: integer('number').notNull(),
    kind: text('kind').notNull(),
    recordId: text('record_id').notNull(),
    op: text('op', { enum: SYNC_OPS }).notNull(),
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

/**
 * Changes pulled from the hub that this install set aside instead of applying: fields that its own
 * rules refuse (the same checks as a local write), an operation the kind does not allow, a record
 * that clashes with one held here. The pull moves on; a person sees them with `courtier sync
 * conflicts`. Keyed by the hub's seq: a page pulled again after a crash sets nothing aside twice.
 */
export const syncConflicts = sqliteTable(
  'sync_conflicts',
  {
    cabinetId: text('cabinet_id').notNull(),
    seq: integer('seq').notNull(),
    deviceId: text('device_id').notNull(),
    kind: text('kind').notNull(),
    recordId: text('record_id').notNull(),
    op: text('op', { enum: SYNC_OPS }).notNull(),
    hlc: text('hlc').notNull(),
    /** JSON of the change's fields, cut to a few KiB: enough to see what came. */
    fields: text('fields').notNull(),
    /** A stable code (invalid_fields, operation_refused, record_clash, …) and the reason in words. */
    reason: text('reason').notNull(),
    message: text('message').notNull(),
    /**
     * JSON of what this version of Courtier did not know (reason not_understood): the kind, or the
     * field names. Once a newer version knows them all, the change is fetched again and applied.
     */
    notUnderstood: text('not_understood'),
    /**
     * Set aside as a record's state read from the hub (a join, a resync), keyed by the seq of its
     * newest change: tried again as the record's state, since that change alone holds only its own fields.
     */
    fromState: integer('from_state', { mode: 'boolean' }).notNull().default(false),
    setAsideAt: integer('set_aside_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.seq] })],
);

/**
 * Changes made here that the hub refused for what they hold (a value it cannot store, a change over
 * its size limit): taken out of the queue so that the ones after them go, and kept here whole for a
 * person to see. The value stays on this install; the other installs do not get it.
 */
export const syncRefused = sqliteTable(
  'sync_refused',
  {
    cabinetId: text('cabinet_id').notNull(),
    /** The change's stamp, unique per device: the change's identity once out of the queue's numbering. */
    hlc: text('hlc').notNull(),
    kind: text('kind').notNull(),
    recordId: text('record_id').notNull(),
    op: text('op', { enum: SYNC_OPS }).notNull(),
    /** JSON of the change's fields, whole. */
    fields: text('fields').notNull(),
    /** The hub's error code and its words. */
    code: text('code').notNull(),
    message: text('message').notNull(),
    refusedAt: integer('refused_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.hlc] })],
);

/**
 * PDFs fetched for a pulled page before it is applied: written one at a time as they arrive (so a
 * page's PDFs are never all in memory), read by the transaction that applies the page, which
 * deletes them. What a crash leaves is deleted an hour later.
 */
export const syncStagedBlobs = sqliteTable(
  'sync_staged_blobs',
  {
    cabinetId: text('cabinet_id').notNull(),
    sha256: text('sha256').notNull(),
    bytes: blob('bytes', { mode: 'buffer' }).notNull(),
    /** When it was fetched: what a crash left behind is deleted once it is old, never what another pull is applying. */
    stagedAt: integer('staged_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.sha256] })],
);
