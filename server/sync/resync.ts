import { formatHlc, parseHlc } from '../../shared/hlc.js';
import { recordAudit } from '../audit/service.js';
import type { Deps } from '../deps.js';
import type { RecordsByKind } from './apply.js';
import * as store from './store.js';
import { restartWalletExchange } from '../wallet/hub-link.js';

/** Older than any stamp: what a field created here and never changed since is sent with. */
const CREATION_STAMP = formatHlc({ time: 0, counter: 0, device: '0' });

/**
 * Queues what this install changed that the hub may lack: each field whose clock is one of this
 * install's devices (edits made while disconnected, changes dropped from the queue when it
 * disconnected), with that clock's time, so that it wins only over what is older, and a stale
 * value never over a later edit made elsewhere. Fields of one clock go as one change (a record
 * created while disconnected goes whole); a job goes whole, as jobs do.
 *
 * A field without a clock was created here (a creation writes none) and never changed since. On a
 * reconnect the hub has it. After the hub lost changes (`unclocked`), its record goes again whole,
 * first, stamped older than anything: an install that holds it keeps what it has (it clocked it
 * when it pulled it), one that does not (joined since) gets it.
 */
export function queueOwnEdits(deps: Pick<Deps, 'db'>, connection: store.ConnectionRow, records: RecordsByKind, unclocked = false): number {
  const orm = deps.db.orm;
  const own = store.ownDevices(orm, connection.cabinetId);
  let number = connection.nextNumber;
  const queue = (kind: string, recordId: string, op: 'upsert' | 'erase', stamp: string, fields: Record<string, unknown>) => {
    const { time, counter } = parseHlc(stamp);
    const hlc = formatHlc({ time, counter, device: connection.deviceId });
    store.appendOutbox(orm, { cabinetId: connection.cabinetId, number, kind, recordId, op, hlc, fields: JSON.stringify(fields) });
    number += 1;
    // The fields take the stamp the others will hold: its device decides a tie with another stamp of
    // the same moment, and this install must decide it as they do.
    if (stamp !== CREATION_STAMP)
      store.mergeFieldClocks(
        orm,
        connection.cabinetId,
        kind,
        recordId,
        Object.fromEntries(Object.keys(fields).map((field) => [field, hlc])),
        op === 'erase',
      );
  };
  for (const adapter of records.values()) {
    for (const { recordId, fields } of adapter.snapshot(deps.db, connection.cabinetId)) {
      const held = store.findFieldClocks(orm, connection.cabinetId, adapter.kind, recordId);
      const mine = Object.entries(held?.clocks ?? {}).filter(([field, stamp]) => field in fields && own.has(parseHlc(stamp).device));
      const created = unclocked && !held?.erased && Object.keys(fields).some((field) => held?.clocks[field] === undefined);
      if (created) queue(adapter.kind, recordId, 'upsert', CREATION_STAMP, fields);
      if (mine.length === 0) continue;
      const newest = mine
        .map(([, stamp]) => stamp)
        .sort()
        .at(-1) as string;
      if (held?.erased) {
        if (adapter.kind === 'client' || adapter.kind === 'event') queue(adapter.kind, recordId, 'erase', newest, fields);
        continue;
      }
      if (adapter.kind === 'job') {
        queue(adapter.kind, recordId, 'upsert', newest, fields);
        continue;
      }
      const byStamp = new Map<string, Record<string, unknown>>();
      for (const [field, stamp] of mine) byStamp.set(stamp, { ...byStamp.get(stamp), [field]: fields[field] });
      for (const stamp of [...byStamp.keys()].sort()) queue(adapter.kind, recordId, 'upsert', stamp, byStamp.get(stamp) ?? {});
    }
  }
  store.updateConnection(orm, connection.cabinetId, { nextNumber: number });
  return number - connection.nextNumber;
}

/** The hub answered with another epoch than the one this install knew: it was restored from a backup. */
export class HubEpochChanged extends Error {
  override name = 'HubEpochChanged';
  constructor(readonly epoch: string) {
    super('the hub was restored from a backup (its epoch changed)');
  }
}

/** Why an install starts over with the hub, as the audit log says it. */
type ResyncReason = 'hub_restored' | 'hub_went_back' | 'hub_lacks_changes' | 'install_restored';

/**
 * Starts over with the hub, in one transaction, when one of them went back in time (restored from
 * a backup): the cabinet is pulled again from the start, this device's own changes included (an
 * install restored from a backup gets back what it made after the backup); the queue takes the
 * numbers the hub expects (`renumberFrom`); and, when the hub may have lost what it acknowledged
 * (`reupload`), everything this install's devices stamped is queued again with its own stamps, and
 * what it created and never changed since, whole, stamped older than anything (queueOwnEdits).
 * Applying a change twice, or sending one twice, changes nothing: fields merge by stamp.
 */
export function resyncWithHub(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges' | 'keys'>,
  records: RecordsByKind,
  cabinetId: string,
  how: { reason: ResyncReason; epoch?: string; renumberFrom?: number; reupload: boolean },
): void {
  const { orm } = deps.db;
  deps.db.immediateTransaction(() => {
    const connection = store.findConnection(orm, cabinetId);
    if (!connection) return;
    const renumbered = how.renumberFrom === undefined ? 0 : store.renumberOutbox(orm, cabinetId, how.renumberFrom);
    const linked = store.findConnection(orm, cabinetId) ?? connection;
    const reuploaded = how.reupload ? queueOwnEdits(deps, linked, records, true) : 0;
    // The hub may have lost credits entries it acknowledged too: the cabinet's ledger again, this install's sent again.
    if (how.reupload) restartWalletExchange(deps, cabinetId);
    store.updateConnection(orm, cabinetId, { pullCursor: 0, resyncing: true, hubEpoch: how.epoch ?? connection.hubEpoch });
    recordAudit(deps, {
      cabinetId,
      action: 'sync.resynced',
      actor: { kind: 'system', id: null, label: 'sync', address: null, listener: 'internal' },
      target: connection.deviceId,
      details: {
        reason: how.reason,
        pulled_from: connection.pullCursor,
        queued_renumbered: renumbered,
        changes_uploaded_again: reuploaded,
      },
    });
  });
  deps.syncChanges.notify();
}
