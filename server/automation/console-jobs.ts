import { ACTIVE_STATUSES, type Job } from '../../shared/automation.js';
import type { ConsoleJob, ConsoleJobDetail } from '../../shared/console-automation.js';
import type { Page } from '../../shared/pagination.js';
import type { Client } from '../../shared/crm.js';
import { getClient, listClients } from '../crm/clients.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { listDevis } from '../devis/list.js';
import { getDevis } from '../devis/service.js';
import { ApiError } from '../errors.js';
import { cursorCodec, toPage } from '../platform/http/cursor.js';
import { jobCredits } from '../wallet/service.js';
import { findProduct } from './catalogue.js';
import { toJob } from './jobs.js';
import { enqueueTarification } from './service.js';
import * as store from './store.js';

/**
 * Jobs as the console shows them: the API's Job with the insured's name, the product's label and
 * the credits, so that a broker tells rows apart; one job in full (inputs, timeline); Retry.
 */

const RETRYABLE: readonly Job['status'][] = ['failed', 'cancelled'];

/** A client's name as a broker says it: "Jean Dupont", or the company's name; null once erased. */
function clientName(client: Pick<Client, 'type' | 'first_name' | 'last_name' | 'company_name'>): string | null {
  if (client.type === 'company') return client.company_name;
  const parts = [client.first_name, client.last_name].filter((p): p is string => p !== null && p !== '');
  return parts.length > 0 ? parts.join(' ') : null;
}

function insuredOf(deps: Deps, row: store.JobRow, clientId: string | null): string | null {
  if (clientId !== null) {
    try {
      const name = clientName(getClient(deps, row.cabinetId, clientId));
      if (name !== null) return name;
    } catch (err) {
      // A client not on this install (yet): the name in the data says who it is.
      if (!(err instanceof ApiError)) throw err;
    }
  }
  const named = (JSON.parse(row.dicData) as Record<string, unknown>).insured_name;
  return typeof named === 'string' && named.trim() !== '' ? named.trim() : null;
}

function clientOf(deps: Deps, row: store.JobRow): string | null {
  try {
    return getDevis(deps, row.cabinetId, row.devisId).client_id;
  } catch (err) {
    if (err instanceof ApiError) return null;
    throw err;
  }
}

function labelsOf(deps: Deps, row: store.JobRow): { product: string; insurer: string } {
  const insurer = deps.insurers.get(row.compagnie)?.name ?? row.compagnie;
  try {
    return { product: findProduct(deps, row.produit, row.compagnie).product.label, insurer };
  } catch (err) {
    if (err instanceof ApiError) return { product: row.produit, insurer };
    throw err;
  }
}

function creditsOf(deps: Deps, row: store.JobRow, job: Job): ConsoleJob['credits'] {
  const local = jobCredits(deps, row.cabinetId, row.id);
  if (local.recorded) return { cost: row.costCredits, debited: local.debited, refunded: local.refunded };
  // Enqueued on another install: its wallet was debited the cost, and gave back what was not consumed (nothing yet while it runs).
  return { cost: row.costCredits, debited: row.costCredits, refunded: Math.max(0, row.costCredits - job.credits_consumed) };
}

function toConsoleJob(deps: Deps, row: store.JobRow): ConsoleJob {
  const job = toJob(deps, row);
  const clientId = clientOf(deps, row);
  const labels = labelsOf(deps, row);
  return {
    ...job,
    insured: insuredOf(deps, row, clientId),
    product_label: labels.product,
    insurer_name: labels.insurer,
    client_id: clientId,
    // Pulled from another install: no enqueue number here, and its robots, not these, run it.
    elsewhere: row.enqueueNumber === null,
    credits: creditsOf(deps, row, job),
  };
}

function findRow(deps: Deps, cabinetId: string, jobId: string): store.JobRow {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  if (!row) throw new ApiError('not_found', `No job with id ${jobId} in this cabinet.`);
  return row;
}

export function getConsoleJob(deps: Deps, cabinetId: string, jobId: string): ConsoleJob {
  return toConsoleJob(deps, findRow(deps, cabinetId, jobId));
}

/** The job for the live feed, or null when this cabinet has none with that id. */
export function findConsoleJob(deps: Deps, cabinetId: string, jobId: string): ConsoleJob | null {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  return row ? toConsoleJob(deps, row) : null;
}

export function getConsoleJobDetail(deps: Deps, cabinetId: string, jobId: string): ConsoleJobDetail {
  const row = findRow(deps, cabinetId, jobId);
  return {
    ...toConsoleJob(deps, row),
    dicData: JSON.parse(row.dicData) as Record<string, unknown>,
    steps: store.jobTimeline(row).map((s) => ({ at: toIso(s.at), status: s.status, step: s.step, percent: s.percent })),
    retryable: RETRYABLE.includes(row.status),
  };
}

export interface ConsoleJobQuery {
  limit: number;
  cursor?: string;
  status?: Job['status'];
  /** Creation range [from, to) in epoch milliseconds. */
  from?: number;
  to?: number;
  /** Matches the job's insured, or a client named so (the jobs of that client's quotes). */
  q?: string;
}

/** The quotes of the clients a broker's search names (at most 50 clients, 100 quotes each: a search, not an export). */
function quotesOfClientsNamed(deps: Deps, cabinetId: string, q: string): string[] {
  return listClients(deps, cabinetId, { limit: 50, q }).data.flatMap((client) =>
    listDevis(deps, cabinetId, { limit: 100, client_id: client.client_id }).data.map((d) => d.devis_id),
  );
}

/** The console's job list: newest first, filtered; the cursor is bound to the filters. */
export function listConsoleJobs(deps: Deps, cabinetId: string, query: ConsoleJobQuery): Page<ConsoleJob> {
  const codec = cursorCodec(deps.keys.cursor, {
    cabinetId,
    resource: 'console-jobs',
    filters: { status: query.status, from: query.from, to: query.to, q: query.q },
  });
  const search = query.q === undefined ? undefined : { text: query.q, devisIds: quotesOfClientsNamed(deps, cabinetId, query.q) };
  const rows = store.listJobs(
    deps.db.orm,
    cabinetId,
    { status: query.status, createdFrom: query.from, createdBefore: query.to, search, after: codec.after(query.cursor) },
    query.limit + 1,
  );
  return toPage(rows, query.limit, (row) => toConsoleJob(deps, row), codec.next);
}

/** What a console shows on connecting: the unfinished jobs, newest first. */
export function listUnfinishedConsoleJobs(deps: Deps, cabinetId: string, limit = 200): ConsoleJob[] {
  return store.listJobsInStatuses(deps.db.orm, cabinetId, ['pending', ...ACTIVE_STATUSES], limit).map((row) => toConsoleJob(deps, row));
}

/**
 * Retry: a new job with the failed (or cancelled) one's insurer, product, data and client, priced
 * and charged like any other. Its own request is not taken for a replay of the one it retries; a
 * second Retry while the first is queued is (the replay guard answers with that job).
 */
export function retryJob(deps: Deps, cabinetId: string, jobId: string): ReturnType<typeof enqueueTarification> {
  const row = findRow(deps, cabinetId, jobId);
  if (!RETRYABLE.includes(row.status)) {
    throw new ApiError('job_not_retryable', `The job is ${row.status}: only a failed or cancelled job can be priced again.`, {
      status: row.status,
    });
  }
  const clientId = clientOf(deps, row);
  return enqueueTarification(
    deps,
    cabinetId,
    {
      compagnie: row.compagnie,
      produit: row.produit,
      dicData: JSON.parse(row.dicData) as Record<string, unknown>,
      ...(clientId !== null ? { client_id: clientId } : {}),
    },
    row.environment,
    { retryOf: row.id },
  );
}
