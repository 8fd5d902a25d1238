/**
 * What a server child (bench/server-child.ts) and the parent say to each other, one JSON object
 * per line: the child announces itself on stdout once listening; the parent writes "cpu" on the
 * child's stdin and reads back the child's CPU time. Stdout carries nothing else (the Courtier
 * logger writes to the null device), so a line is always one of these messages.
 */

/** First line of the child's stdout, once it listens on 127.0.0.1. */
interface ReadyMessage {
  type: 'ready';
  port: number;
  /** Headers every request needs (the API key, for Courtier). */
  headers: Record<string, string>;
}

/** The child's answer to a "cpu" line: process.cpuUsage() user + system, in microseconds. */
interface CpuMessage {
  type: 'cpu';
  micros: number;
}

export type ChildMessage = ReadyMessage | CpuMessage;

export const CPU_REQUEST = 'cpu';

/** Targets the child knows; each is a function in bench/targets.ts. */
const TARGET_NAMES = [
  'bare',
  'bare-sqlite',
  'courtier',
  'courtier-100k',
  'courtier-webhooks',
  'bare-webhooks',
  'courtier-mcp',
  'hub',
  'courtier-sync',
  'courtier-lan',
  'bare-tls',
  'sandbox-portal',
] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export function isTargetName(value: string): value is TargetName {
  return (TARGET_NAMES as readonly string[]).includes(value);
}

/** Environment variables the parent sets for the courtier-webhooks and bare-webhooks children: where its receiver listens, and its CA (PEM). */
export const WEBHOOK_RECEIVER_URL_ENV = 'COURTIER_BENCH_RECEIVER_URL';
export const WEBHOOK_RECEIVER_CA_ENV = 'COURTIER_BENCH_RECEIVER_CA';
/** For the hub child: its PostgreSQL database (the courtier-sync child makes its pairing code there). */
export const HUB_DATABASE_URL_ENV = 'COURTIER_BENCH_HUB_DATABASE_URL';
/** For the courtier-sync child: the hub it connects its cabinet to. */
export const SYNC_HUB_URL_ENV = 'COURTIER_BENCH_HUB_URL';
/**
 * For courtier-lan and bare-tls: the certificate and key (PEM files) both serve, and the port of
 * the LAN listener on LAN_BENCH_ADDRESS (a loopback address the app is told is its LAN one).
 */
export const LAN_CERT_FILE_ENV = 'COURTIER_BENCH_LAN_CERT';
export const LAN_KEY_FILE_ENV = 'COURTIER_BENCH_LAN_KEY';
export const LAN_PORT_ENV = 'COURTIER_BENCH_LAN_PORT';
export const LAN_BENCH_ADDRESS = '127.0.0.2';
/**
 * Subscriptions (events ["*"]) the courtier-webhooks target creates on the receiver, at
 * <receiver URL>/<i>; the bare-webhooks target spreads its bodies over the same paths.
 */
export const WEBHOOK_SUBSCRIPTIONS = 10;
/** opportunity.created events the courtier-webhooks target records before it listens: the dispatcher's backlog. */
export const WEBHOOK_BACKLOG_EVENTS = 10_000;
/** Opportunities the courtier-100k target seeds. */
export const SEEDED_OPPORTUNITIES = 100_000;

/** The one route of the bare target. */
export const BARE_PATH = '/hello';
/**
 * The bare-sqlite target's route, on a courtier-100k data dir: GET runs the opportunities list's
 * keyset query (query: limit, and before_created_at + before_id for a deeper page), POST its create.
 */
export const BARE_OPPORTUNITIES_PATH = '/bare/opportunities';

/** The bare-webhooks target's route: POST a BareSendRequest, answered with a BareSendResult once every body has been answered. */
export const BARE_SEND_PATH = '/send';

export interface BareSendRequest {
  /** Signed bodies to POST in all, spread over the WEBHOOK_SUBSCRIPTIONS paths. */
  count: number;
}

export interface BareSendResult {
  /** Responses with status 200. */
  ok: number;
  /** Other statuses, errors and timeouts. */
  failed: number;
  /** What went wrong first, when something did. */
  firstError?: string;
  /** The limits it sent under: the service's defaults (webhookConcurrency, webhookConcurrencyPerEndpoint). */
  concurrency: number;
  perEndpoint: number;
}

/** What bench/probe-child.ts is started with (its one argument, as JSON). */
export interface ProbeOptions {
  url: string;
  headers: Record<string, string>;
  connections: number;
  /** Requests per second in all, through autocannon's overallRate. */
  rate: number;
  /** It stops by then if stdin has not closed. */
  maxSeconds: number;
}

/** The one line bench/probe-child.ts prints once stopped. */
export interface ProbeReport {
  /** Every response's latency, in ms. */
  latenciesMs: number[];
  /** Responses per status code. */
  statuses: Record<string, number>;
  total: number;
  errors: number;
  timeouts: number;
  /** How late the probe's event loop ran, p99, in ms beyond its timer: how late it may have read its responses. */
  loopDelayP99Ms: number;
  /** The CPU (user + system) the probe process used, in microseconds. */
  cpuMicros: number;
}

export function parseChildMessage(line: string): ChildMessage {
  const value: unknown = JSON.parse(line);
  if (typeof value === 'object' && value !== null && 'type' in value && (value.type === 'ready' || value.type === 'cpu')) {
    return value as ChildMessage;
  }
  throw new Error(`unexpected line from the server child: ${line}`);
}
