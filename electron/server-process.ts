import { childMessageSchema, type ChildMessage, type ParentMessage } from './protocol.js';

/**
 * The server runs in an Electron utility process (utilityProcess.fork): a crash in a native module
 * or a robot takes that process down, never the window. This module decides when to restart it
 * and how long to wait; main.ts gives it the real fork, tests give it a fake.
 */

/** What the supervisor needs of a child process; Electron's UtilityProcess has all of it. */
export interface ChildHandle {
  on(event: 'exit', listener: (code: number) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  postMessage(message: ParentMessage): void;
  kill(): boolean;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A request to the server process: a parent message that expects a reply, without its id. */
type ServerRequest = DistributiveOmit<Extract<ParentMessage, { request_id: string }>, 'request_id'>;

type SpawnServer = (env: Record<string, string>) => ChildHandle;

/** Timers and time, injected so that tests move time by hand. */
export interface Scheduler {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface BackoffPolicy {
  /** First wait after a crash. */
  initialDelayMs: number;
  /** The wait doubles after each crash in a row, up to this. */
  maxDelayMs: number;
  /** A process that ran this long was healthy: its crash starts the count again. */
  stableAfterMs: number;
  /** Crashes in a row (each before stableAfterMs) after which the supervisor gives up and says so. */
  maxConsecutiveCrashes: number;
  /** A start that has not reported `listening` by then is killed and counted as a crash. */
  startTimeoutMs: number;
  /** How long a clean stop may take before the process is killed. */
  stopTimeoutMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 60_000,
  stableAfterMs: 60_000,
  maxConsecutiveCrashes: 8,
  startTimeoutMs: 60_000,
  stopTimeoutMs: 15_000,
};

export type RestartDecision =
  { action: 'restart'; delayMs: number; consecutiveCrashes: number } | { action: 'give-up'; consecutiveCrashes: number };

/** After an unexpected exit: wait and restart, or give up. A pure function of the history. */
export function decideRestart(
  previousConsecutiveCrashes: number,
  ranForMs: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): RestartDecision {
  const consecutiveCrashes = ranForMs >= policy.stableAfterMs ? 1 : previousConsecutiveCrashes + 1;
  if (consecutiveCrashes > policy.maxConsecutiveCrashes) return { action: 'give-up', consecutiveCrashes };
  const delayMs = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (consecutiveCrashes - 1));
  return { action: 'restart', delayMs, consecutiveCrashes };
}

export type ServerState =
  | { phase: 'starting'; attempt: number }
  | {
      phase: 'running';
      port: number;
      host: string;
      url: string;
      secretStore: 'keychain' | 'encrypted-file';
      secretStoreWarning: string | null;
    }
  | { phase: 'restarting'; delayMs: number; consecutiveCrashes: number; lastExitCode: number | null; reason: string }
  | { phase: 'failed'; consecutiveCrashes: number; reason: string }
  | { phase: 'stopping' }
  | { phase: 'stopped' };

export interface SupervisorOptions {
  spawn: SpawnServer;
  /** The environment of each start (called once per start: each gets a fresh login token). */
  environment: () => Record<string, string>;
  scheduler?: Scheduler;
  backoff?: BackoffPolicy;
  onState?: (state: ServerState) => void;
  /** Every valid message of the child (status updates in particular). */
  onMessage?: (message: ChildMessage) => void;
  /** Messages that fail validation, and other oddities worth a log line. */
  onWarning?: (text: string) => void;
}

export interface Supervisor {
  start(): void;
  /** Stops cleanly (asks, then kills after stopTimeoutMs); resolves once the process is gone. No restart afterwards. */
  stop(): Promise<void>;
  /** Stops the process (if any) and starts a new one at once, e.g. after a settings change. */
  restart(): Promise<void>;
  /** Sends a request and resolves with the child's reply (rejects when not running or on timeout). */
  request(message: ServerRequest, timeoutMs?: number): Promise<void>;
  state(): ServerState;
}

/** The loopback URL of the console's origin for a listening port (LAN sharing or not). */
function localOrigin(port: number): string {
  return `http://127.0.0.1:${port}`;
}

export function createSupervisor(options: SupervisorOptions): Supervisor {
  const scheduler = options.scheduler ?? systemScheduler;
  const policy = options.backoff ?? DEFAULT_BACKOFF;
  let current: ChildHandle | null = null;
  let state: ServerState = { phase: 'stopped' };
  let consecutiveCrashes = 0;
  let attempt = 0;
  let startedAt = 0;
  let wanted = false;
  let restartTimer: unknown = null;
  let startTimer: unknown = null;
  let lastFatal: string | null = null;
  let exitWaiters: (() => void)[] = [];
  let nextRequest = 0;
  const pending = new Map<string, { resolve: () => void; reject: (err: Error) => void; timer: unknown }>();

  const setState = (next: ServerState) => {
    state = next;
    options.onState?.(next);
  };

  const failPending = (why: string) => {
    for (const [id, p] of pending) {
      scheduler.clearTimeout(p.timer);
      p.reject(new Error(why));
      pending.delete(id);
    }
  };

  const spawnOnce = () => {
    restartTimer = null;
    attempt += 1;
    lastFatal = null;
    setState({ phase: 'starting', attempt });
    startedAt = scheduler.now();
    let child: ChildHandle;
    try {
      child = options.spawn(options.environment());
    } catch (err) {
      onExit(null, -1, `the server process could not be started: ${(err as Error).message}`);
      return;
    }
    current = child;
    startTimer = scheduler.setTimeout(() => {
      startTimer = null;
      if (current === child && state.phase === 'starting') {
        lastFatal = `the server did not start within ${Math.round(policy.startTimeoutMs / 1000)} s`;
        child.kill();
      }
    }, policy.startTimeoutMs);
    child.on('message', (raw) => {
      if (current !== child) return;
      const parsed = childMessageSchema.safeParse(raw);
      if (!parsed.success) {
        options.onWarning?.(`ignored a malformed message from the server process: ${parsed.error.issues[0]?.message ?? ''}`);
        return;
      }
      const message = parsed.data;
      if (message.type === 'listening') {
        if (startTimer !== null) scheduler.clearTimeout(startTimer);
        startTimer = null;
        setState({
          phase: 'running',
          port: message.port,
          host: message.host,
          url: localOrigin(message.port),
          secretStore: message.secret_store,
          secretStoreWarning: message.secret_store_warning,
        });
      } else if (message.type === 'fatal') {
        lastFatal = message.message;
      } else if (message.type === 'reply') {
        const waiter = pending.get(message.request_id);
        if (waiter) {
          pending.delete(message.request_id);
          scheduler.clearTimeout(waiter.timer);
          if (message.ok) waiter.resolve();
          else waiter.reject(new Error(message.error ?? 'the server refused'));
        }
      }
      options.onMessage?.(message);
    });
    child.on('exit', (code) => onExit(child, code, null));
  };

  const onExit = (child: ChildHandle | null, code: number, spawnError: string | null) => {
    if (child !== null && current !== child) return;
    current = null;
    if (startTimer !== null) scheduler.clearTimeout(startTimer);
    startTimer = null;
    failPending('the server process exited');
    const waiters = exitWaiters;
    exitWaiters = [];
    for (const resolve of waiters) resolve();
    if (!wanted) {
      setState({ phase: 'stopped' });
      return;
    }
    const reason = spawnError ?? lastFatal ?? `the server process exited with code ${code}`;
    const decision = decideRestart(consecutiveCrashes, scheduler.now() - startedAt, policy);
    consecutiveCrashes = decision.consecutiveCrashes;
    if (decision.action === 'give-up') {
      wanted = false;
      setState({ phase: 'failed', consecutiveCrashes, reason });
      return;
    }
    setState({ phase: 'restarting', delayMs: decision.delayMs, consecutiveCrashes, lastExitCode: spawnError ? null : code, reason });
    restartTimer = scheduler.setTimeout(spawnOnce, decision.delayMs);
  };

  const stopCurrent = (): Promise<void> => {
    if (restartTimer !== null) {
      scheduler.clearTimeout(restartTimer);
      restartTimer = null;
    }
    const child = current;
    if (!child) return Promise.resolve();
    setState({ phase: 'stopping' });
    return new Promise<void>((resolve) => {
      exitWaiters.push(resolve);
      try {
        child.postMessage({ type: 'stop' });
      } catch {
        child.kill();
      }
      const killTimer = scheduler.setTimeout(() => {
        if (current === child) child.kill();
      }, policy.stopTimeoutMs);
      exitWaiters.push(() => scheduler.clearTimeout(killTimer));
    });
  };

  return {
    start() {
      if (wanted) return;
      wanted = true;
      consecutiveCrashes = 0;
      if (!current && restartTimer === null) spawnOnce();
    },
    async stop() {
      wanted = false;
      await stopCurrent();
      if (state.phase !== 'failed') setState({ phase: 'stopped' });
    },
    async restart() {
      wanted = false;
      await stopCurrent();
      wanted = true;
      consecutiveCrashes = 0;
      spawnOnce();
    },
    request(message, timeoutMs = 10_000) {
      const child = current;
      if (!child || state.phase !== 'running') return Promise.reject(new Error('the server is not running'));
      const request_id = `r${++nextRequest}`;
      return new Promise<void>((resolve, reject) => {
        const timer = scheduler.setTimeout(() => {
          pending.delete(request_id);
          reject(new Error('the server did not answer in time'));
        }, timeoutMs);
        pending.set(request_id, { resolve, reject, timer });
        child.postMessage({ ...message, request_id } as ParentMessage);
      });
    },
    state: () => state,
  };
}
