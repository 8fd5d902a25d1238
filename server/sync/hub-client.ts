import { isIP } from 'node:net';
import type { z } from 'zod';
import { errorBodySchema } from '../../shared/errors.js';
import { pathTo } from '../../shared/endpoint.js';
import {
  DEVICE_TIME_HEADER,
  getBlob,
  HUB_EPOCH_HEADER,
  HUB_TIME_HEADER,
  MAX_BLOB_BYTES,
  MAX_CHANGE_BYTES,
  MAX_PULL_PAGE_BYTES,
  pullChanges,
  pullResponseSchema,
  pushChanges,
  pushResponseSchema,
  putBlob,
  SYNC_PROTOCOL_HEADER,
  SYNC_PROTOCOL_VERSION,
  type PullResponse,
  type PushBody,
  type PushResponse,
} from '../../shared/sync-protocol.js';
import {
  leaveHub,
  leaveResponseSchema,
  pairDevice,
  pairResponseSchema,
  type LeaveResponse,
  type PairBody,
  type PairResponse,
} from '../../shared/sync-pairing.js';
import { getState, stateResponseSchema, type StateResponse } from '../../shared/sync-state.js';
import {
  exchangeWallet,
  walletExchangeResponseSchema,
  type WalletExchangeBody,
  type WalletExchangeResponse,
} from '../../shared/sync-wallet.js';

/** The hub answered with an error body: it refused the request (revoked, clock skew, a gap…). */
export class HubRefusal extends Error {
  override name = 'HubRefusal';
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly details: unknown,
  ) {
    super(message);
  }
}

/** The hub could not be reached, or failed on its side (5xx): try again later. */
export class HubUnreachable extends Error {
  override name = 'HubUnreachable';
}

export type HubFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface HubClientOptions {
  hubUrl: string;
  /** `<device id>.<secret>`; absent before pairing. */
  credential?: string;
  fetch: HubFetch;
  now: () => number;
  /** Told the hub's clock at every answer, for the clock-skew warning. */
  onHubTime?: (hubTime: number, localTime: number) => void;
  /** Told the hub's epoch at every answer to this device, before its body is used: may throw to stop there. */
  onHubEpoch?: (epoch: string) => void;
  protocol?: number;
}

export interface HubClient {
  pair(body: PairBody): Promise<PairResponse>;
  push(body: PushBody): Promise<PushResponse>;
  pull(
    query: { after: number; limit?: number; wait?: number; own?: boolean; wallet_after?: number },
    signal?: AbortSignal,
  ): Promise<PullResponse>;
  /** Sends this device's credits entries; answers the cabinet's balance and its entries after the cursor. */
  exchangeWallet(body: WalletExchangeBody): Promise<WalletExchangeResponse>;
  /** A page of the cabinet's records as they stand, after a record (kind and id; empty for the first page). */
  state(query: { after_kind: string; after_id: string; limit?: number } | { kind: string; record_id: string }): Promise<StateResponse>;
  /** This device leaves its cabinet (revoked on the hub); `timeoutMs` bounds the wait. */
  leave(timeoutMs: number): Promise<LeaveResponse>;
  putBlob(sha256: string, bytes: Buffer): Promise<void>;
  getBlob(sha256: string): Promise<Buffer>;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/**
 * The hub's URL, or why it is refused: https, or http to this machine only (a test hub, or a
 * reverse proxy on the same host), since the device credential travels in every request.
 */
export function checkHubUrl(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text}" is not a URL; give the hub's address, e.g. https://hub.example.fr`;
  }
  if (url.username || url.password) return 'the hub URL must not contain a user name or password';
  if (url.protocol === 'https:') return url;
  if (url.protocol !== 'http:') return `the hub URL must start with https:// (not ${url.protocol}//)`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = LOOPBACK_NAMES.has(url.hostname) || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
  return loopback
    ? url
    : 'an http:// hub URL is accepted only on this machine (localhost); use https:// for a hub elsewhere, so that the device credential is never sent in clear';
}

const REQUEST_TIMEOUT_MS = 30_000;
/**
 * The most this install reads of one answer, whatever the hub says: a page is at most
 * MAX_PULL_PAGE_BYTES of fields plus one change and 1000 changes' metadata; an error body is small.
 */
const MAX_JSON_ANSWER_BYTES = MAX_PULL_PAGE_BYTES + MAX_CHANGE_BYTES + 1024 * 1024;
const MAX_ERROR_ANSWER_BYTES = 64 * 1024;

/** The answer's body, read up to `limit` bytes: an answer that goes past it is refused, never held. */
async function readBody(base: string, response: Response, limit: number): Promise<Buffer> {
  const tooLarge = () =>
    new HubRefusal(
      'hub_answer_too_large',
      `the hub at ${base} answered more than ${limit} bytes; the answer was not read`,
      response.status,
      undefined,
    );
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export function createHubClient(options: HubClientOptions): HubClient {
  const base = options.hubUrl.replace(/\/+$/, '');
  const call = async <S extends z.ZodType>(
    path: string,
    init: RequestInit & { timeoutMs?: number },
    schema: S | null,
  ): Promise<{ body: z.output<S>; raw: Response }> => {
    const headers = new Headers(init.headers);
    headers.set(SYNC_PROTOCOL_HEADER, String(options.protocol ?? SYNC_PROTOCOL_VERSION));
    headers.set(DEVICE_TIME_HEADER, String(options.now()));
    if (options.credential) headers.set('authorization', `Bearer ${options.credential}`);
    const timeout = AbortSignal.timeout(init.timeoutMs ?? REQUEST_TIMEOUT_MS);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    let response: Response;
    try {
      // Never followed: a redirect could send the device credential, or this install's requests, anywhere (the LAN, this machine).
      response = await options.fetch(base + path, { ...init, headers, signal, redirect: 'manual' });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw new HubUnreachable(`the hub at ${base} cannot be reached: ${networkReason(err)}`);
    }
    const hubTime = Number(response.headers.get(HUB_TIME_HEADER));
    if (Number.isFinite(hubTime) && hubTime > 0) options.onHubTime?.(hubTime, options.now());
    const epoch = response.headers.get(HUB_EPOCH_HEADER);
    if (epoch !== null && options.credential) {
      try {
        options.onHubEpoch?.(epoch);
      } catch (err) {
        await response.body?.cancel();
        throw err;
      }
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new HubRefusal(
        'hub_redirected',
        `the hub at ${base} answered ${path} with a redirect, which is never followed`,
        response.status,
        undefined,
      );
    }
    if (!response.ok) throw await refusal(base, response);
    if (schema === null) return { body: undefined as z.output<S>, raw: response };
    const json = parseJson(await readBody(base, response, MAX_JSON_ANSWER_BYTES));
    if (json === undefined) throw new HubUnreachable(`the hub at ${base} answered something that is not JSON`);
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new HubUnreachable(`the hub at ${base} answered ${path} in an unexpected shape (is it a Courtier hub?)`);
    return { body: parsed.data, raw: response };
  };
  const json = (body: unknown): RequestInit => ({
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });

  return {
    pair: async (body) => (await call(pathTo(pairDevice), json(body), pairResponseSchema)).body,
    push: async (body) => (await call(pathTo(pushChanges), json(body), pushResponseSchema)).body,
    pull: async (query, signal) =>
      (
        await call(
          pathTo(pullChanges, {}, query),
          { method: 'GET', signal, timeoutMs: REQUEST_TIMEOUT_MS + (query.wait ?? 0) * 1000 },
          pullResponseSchema,
        )
      ).body,
    exchangeWallet: async (body) => (await call(pathTo(exchangeWallet), json(body), walletExchangeResponseSchema)).body,
    state: async (query) => (await call(pathTo(getState, {}, query), { method: 'GET' }, stateResponseSchema)).body,
    leave: async (timeoutMs) => (await call(pathTo(leaveHub), { method: 'DELETE', timeoutMs }, leaveResponseSchema)).body,
    putBlob: async (sha256, bytes) => {
      await call(
        pathTo(putBlob, { sha256 }),
        { method: 'PUT', body: bytes, headers: { 'content-type': 'application/octet-stream' } },
        null,
      );
    },
    getBlob: async (sha256) => {
      const { raw } = await call(pathTo(getBlob, { sha256 }), { method: 'GET' }, null);
      return readBody(base, raw, MAX_BLOB_BYTES);
    },
  };
}

async function refusal(base: string, response: Response): Promise<Error> {
  if (response.status >= 500 || response.status === 408) {
    return new HubUnreachable(`the hub at ${base} answered ${response.status}; it will be tried again`);
  }
  const body = await readBody(base, response, MAX_ERROR_ANSWER_BYTES).catch(() => Buffer.alloc(0));
  const parsed = errorBodySchema.safeParse(parseJson(body));
  if (!parsed.success)
    return new HubUnreachable(`the hub at ${base} answered ${response.status} without a Courtier error (is the URL a Courtier hub?)`);
  return new HubRefusal(parsed.data.error, parsed.data.message, response.status, parsed.data.details);
}

/** Node's network error codes as a person reads them; fetch itself only says "fetch failed", its cause says why. */
const NETWORK_REASONS: Record<string, string> = {
  ENOTFOUND: 'no computer has this name',
  EAI_AGAIN: 'the name could not be looked up (no DNS answer)',
  ECONNREFUSED: 'nothing answers on that port (the hub may be stopped)',
  ECONNRESET: 'the connection was cut',
  EHOSTUNREACH: 'that address cannot be reached from this network',
  ENETUNREACH: 'this computer has no network route there',
  ETIMEDOUT: 'no answer in time',
  UND_ERR_CONNECT_TIMEOUT: 'no answer in time',
  UND_ERR_SOCKET: 'the connection was cut',
  CERT_HAS_EXPIRED: 'its HTTPS certificate has expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its HTTPS certificate is for another name',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its HTTPS certificate is not trusted by this computer',
  SELF_SIGNED_CERT_IN_CHAIN: 'its HTTPS certificate is not trusted by this computer',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its HTTPS certificate is not trusted by this computer',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its HTTPS certificate is not trusted by this computer',
};

/** Why a request got no answer, from the error's cause (its code when Node gives one), never just "fetch failed". */
export function networkReason(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && NETWORK_REASONS[code] !== undefined) return `${NETWORK_REASONS[code]} (${code})`;
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === 'string' ? `${message} (${code})` : message;
}
