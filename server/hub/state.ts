import { MAX_PULL_PAGE_BYTES } from '../../shared/sync-protocol.js';
import type { StateResponse } from '../../shared/sync-state.js';
import { hubTime, type HubDeps } from './deps.js';
import type { AuthenticatedDevice } from './devices.js';
import { assertProtocolServed } from './protocol.js';
import { readRecord, readRecords, type StoredRecord } from './records.js';

export interface StateRead {
  afterKind: string;
  afterId: string;
  limit: number;
  /** One record only (its kind and id). */
  only?: { kind: string; recordId: string } | undefined;
  protocol: number;
}

/**
 * A page of the caller's cabinet's records as they stand (hub_records), after a (kind, record id),
 * with the cabinet's newest seq read in the same statement: every change up to it is in the page.
 * Records changed while a join reads later pages come newer, and again in the changes after the
 * first page's as_of_seq; field stamps merge them either way (docs/SYNC.md, "State and retention").
 */
export async function readState(deps: HubDeps, caller: AuthenticatedDevice, read: StateRead): Promise<string> {
  assertProtocolServed(read.protocol, caller.highestProtocol);
  const found = read.only
    ? await readRecord(deps.sql, caller.cabinetId, read.only)
    : await readRecords(deps.sql, caller.cabinetId, { kind: read.afterKind, recordId: read.afterId }, read.limit + 1, MAX_PULL_PAGE_BYTES);
  const records = found.rows.slice(0, read.limit);
  return stateAnswer(records, { as_of_seq: found.newestSeq, more: found.rows.length > read.limit || found.cut, hub_time: hubTime(deps) });
}

/** The page's JSON, with each record's fields and stamps spliced in as PostgreSQL's text of them (never parsed by the hub). */
function stateAnswer(records: readonly StoredRecord[], rest: Omit<StateResponse, 'records'>): string {
  const items = records.map(
    ({ fieldsJson, stampsJson, ...record }) => `${JSON.stringify(record).slice(0, -1)},"fields":${fieldsJson},"stamps":${stampsJson}}`,
  );
  return `{"records":[${items.join(',')}],${JSON.stringify(rest).slice(1)}`;
}
