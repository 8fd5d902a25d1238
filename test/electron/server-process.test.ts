import { describe, expect, it } from 'vitest';
import {
  createSupervisor,
  decideRestart,
  DEFAULT_BACKOFF,
  type ChildHandle,
  type Scheduler,
  type ServerState,
} from '../../electron/server-process.js';
import type { ParentMessage } from '../../electron/protocol.js';

/** A scheduler whose time moves only when the test says so. */
function fakeScheduler() {
  let now = 0;
  let nextId = 1;
  const timers = new Map<number, { at: number; callback: () => void }>();
  const scheduler: Scheduler & { advance(ms: number): void; pending(): number[] } = {
    now: () => now,
    setTimeout(callback, ms) {
      const id = nextId++;
      timers.set(id, { at: now + ms, callback });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].callback();
      }
      now = until;
    },
    pending: () => [...timers.values()].map((t) => t.at - now).sort((a, b) => a - b),
  };
  return scheduler;
}

class FakeChild implements ChildHandle {
  exitListeners: ((code: number) => void)[] = [];
  messageListeners: ((message: unknown) => void)[] = [];
  sent: ParentMessage[] = [];
  killed = false;
  constructor(readonly env: Record<string, string>) {}
  on(event: 'exit' | 'message', listener: ((code: number) => void) | ((message: unknown) => void)) {
    if (event === 'exit') this.exitListeners.push(listener as (code: number) => void);
    else this.messageListeners.push(listener as (message: unknown) => void);
    return this;
  }
  postMessage(message: ParentMessage) {
    this.sent.push(message);
  }
  kill() {
    this.killed = true;
    this.exit(137);
    return true;
  }
  emit(message: unknown) {
    for (const l of this.messageListeners) l(message);
  }
  listen(port = 51234) {
    this.emit({ type: 'listening', port, host: '127.0.0.1', secret_store: 'keychain', secret_store_warning: null });
  }
  exit(code: number) {
    for (const l of this.exitListeners) l(code);
  }
}

function setUp(options: { spawnThrows?: boolean } = {}) {
  const scheduler = fakeScheduler();
  const children: FakeChild[] = [];
  const states: ServerState[] = [];
  let starts = 0;
  const supervisor = createSupervisor({
    spawn: (env) => {
      if (options.spawnThrows) throw new Error('no such file');
      const child = new FakeChild(env);
      children.push(child);
      return child;
    },
    environment: () => ({ START: String(++starts) }),
    scheduler,
    onState: (s) => states.push(s),
  });
  return { scheduler, children, states, supervisor, last: () => children[children.length - 1]! };
}

describe('decideRestart', () => {
  it('doubles the wait after each quick crash, up to the maximum', () => {
    let crashes = 0;
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const d = decideRestart(crashes, 100);
      if (d.action !== 'restart') throw new Error('gave up too early');
      delays.push(d.delayMs);
      crashes = d.consecutiveCrashes;
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
  });

  it('gives up after too many crashes in a row', () => {
    expect(decideRestart(DEFAULT_BACKOFF.maxConsecutiveCrashes, 100)).toEqual({
      action: 'give-up',
      consecutiveCrashes: DEFAULT_BACKOFF.maxConsecutiveCrashes + 1,
    });
  });

  it('starts counting again after a process that ran long enough', () => {
    expect(decideRestart(7, DEFAULT_BACKOFF.stableAfterMs)).toEqual({ action: 'restart', delayMs: 1000, consecutiveCrashes: 1 });
  });
});

describe('the server supervisor', () => {
  it('starts the server, reports its URL once it listens, with a fresh environment per start', () => {
    const { supervisor, children, states, last } = setUp();
    supervisor.start();
    expect(children).toHaveLength(1);
    expect(supervisor.state()).toEqual({ phase: 'starting', attempt: 1 });
    last().listen(40001);
    expect(supervisor.state()).toMatchObject({ phase: 'running', port: 40001, url: 'http://127.0.0.1:40001', secretStore: 'keychain' });
    expect(states.map((s) => s.phase)).toEqual(['starting', 'running']);
    expect(last().env).toEqual({ START: '1' });
  });

  it('restarts a crashed server with a growing backoff, and reports each crash', () => {
    const { supervisor, children, scheduler, states, last } = setUp();
    supervisor.start();
    last().listen();
    last().emit({ type: 'fatal', message: 'better-sqlite3 segfault' });
    last().exit(1);
    expect(supervisor.state()).toEqual({
      phase: 'restarting',
      delayMs: 1000,
      consecutiveCrashes: 1,
      lastExitCode: 1,
      reason: 'better-sqlite3 segfault',
    });
    scheduler.advance(999);
    expect(children).toHaveLength(1);
    scheduler.advance(1);
    expect(children).toHaveLength(2);
    expect(last().env).toEqual({ START: '2' });
    last().exit(3); // crashes again before listening
    expect(supervisor.state()).toMatchObject({
      phase: 'restarting',
      delayMs: 2000,
      consecutiveCrashes: 2,
      reason: 'the server process exited with code 3',
    });
    scheduler.advance(2000);
    expect(children).toHaveLength(3);
    last().listen();
    expect(supervisor.state().phase).toBe('running');
    expect(states.filter((s) => s.phase === 'restarting')).toHaveLength(2);
  });

  it('gives up after repeated quick crashes and says why', () => {
    const { supervisor, children, scheduler, last } = setUp();
    supervisor.start();
    for (let i = 0; i < DEFAULT_BACKOFF.maxConsecutiveCrashes + 1; i++) {
      last().exit(1);
      scheduler.advance(DEFAULT_BACKOFF.maxDelayMs);
    }
    expect(supervisor.state()).toEqual({
      phase: 'failed',
      consecutiveCrashes: DEFAULT_BACKOFF.maxConsecutiveCrashes + 1,
      reason: 'the server process exited with code 1',
    });
    expect(children).toHaveLength(DEFAULT_BACKOFF.maxConsecutiveCrashes + 1);
    expect(scheduler.pending()).toEqual([]);
  });

  it('resets the backoff after a server that ran for a while', () => {
    const { supervisor, scheduler, last } = setUp();
    supervisor.start();
    last().exit(1);
    scheduler.advance(1000);
    last().exit(1);
    scheduler.advance(2000);
    last().listen();
    scheduler.advance(DEFAULT_BACKOFF.stableAfterMs);
    last().exit(1);
    expect(supervisor.state()).toMatchObject({ phase: 'restarting', delayMs: 1000, consecutiveCrashes: 1 });
  });

  it('kills a server that does not start in time and counts it as a crash', () => {
    const { supervisor, scheduler, last } = setUp();
    supervisor.start();
    scheduler.advance(DEFAULT_BACKOFF.startTimeoutMs);
    expect(last().killed).toBe(true);
    expect(supervisor.state()).toMatchObject({ phase: 'restarting', reason: 'the server did not start within 60 s' });
  });

  it('a spawn that throws is a crash too (restarted with backoff)', () => {
    const { supervisor } = setUp({ spawnThrows: true });
    supervisor.start();
    expect(supervisor.state()).toMatchObject({
      phase: 'restarting',
      delayMs: 1000,
      lastExitCode: null,
      reason: 'the server process could not be started: no such file',
    });
  });

  it('stops cleanly on quit: asks the server to stop and does not restart it', async () => {
    const { supervisor, children, scheduler, last } = setUp();
    supervisor.start();
    last().listen();
    const stopped = supervisor.stop();
    expect(last().sent).toEqual([{ type: 'stop' }]);
    expect(supervisor.state().phase).toBe('stopping');
    last().exit(0);
    await stopped;
    expect(supervisor.state().phase).toBe('stopped');
    scheduler.advance(600_000);
    expect(children).toHaveLength(1);
  });

  it('kills a server that does not stop in time', async () => {
    const { supervisor, scheduler, last } = setUp();
    supervisor.start();
    last().listen();
    const stopped = supervisor.stop();
    scheduler.advance(DEFAULT_BACKOFF.stopTimeoutMs);
    await stopped;
    expect(last().killed).toBe(true);
    expect(supervisor.state().phase).toBe('stopped');
  });

  it('stopping during a backoff cancels the pending restart', async () => {
    const { supervisor, children, scheduler, last } = setUp();
    supervisor.start();
    last().exit(1);
    await supervisor.stop();
    scheduler.advance(600_000);
    expect(children).toHaveLength(1);
    expect(supervisor.state().phase).toBe('stopped');
  });

  it('restart() stops the running server and starts a new one at once', async () => {
    const { supervisor, children, last } = setUp();
    supervisor.start();
    last().listen();
    const first = last();
    const restarted = supervisor.restart();
    first.exit(0);
    await restarted;
    expect(children).toHaveLength(2);
    expect(supervisor.state()).toEqual({ phase: 'starting', attempt: 2 });
  });

  it('requests are answered by the server by id; a refusal or an exit rejects them', async () => {
    const { supervisor, last } = setUp();
    supervisor.start();
    await expect(supervisor.request({ type: 'set-robots', enabled: false })).rejects.toThrow('not running');
    last().listen();
    const ok = supervisor.request({ type: 'allow-login', sha256: 'a'.repeat(64) });
    const sent = last().sent[0] as Extract<ParentMessage, { type: 'allow-login' }>;
    expect(sent).toMatchObject({ type: 'allow-login', sha256: 'a'.repeat(64) });
    last().emit({ type: 'reply', request_id: sent.request_id, ok: true });
    await expect(ok).resolves.toBeUndefined();
    const refused = supervisor.request({ type: 'set-robots', enabled: false, reason: 'x' });
    last().emit({ type: 'reply', request_id: (last().sent[1] as { request_id: string }).request_id, ok: false, error: 'database locked' });
    await expect(refused).rejects.toThrow('database locked');
    const orphan = supervisor.request({ type: 'set-robots', enabled: true });
    last().exit(1);
    await expect(orphan).rejects.toThrow('exited');
  });

  it('ignores malformed messages (and tells)', () => {
    const warnings: string[] = [];
    const child = new FakeChild({});
    const supervisor = createSupervisor({
      spawn: () => child,
      environment: () => ({}),
      scheduler: fakeScheduler(),
      onWarning: (w) => warnings.push(w),
    });
    supervisor.start();
    child.emit({ type: 'listening', port: 'eighty' });
    child.emit('hello');
    expect(supervisor.state().phase).toBe('starting');
    expect(warnings).toHaveLength(2);
  });

  it('ignores late events of a process it already replaced', async () => {
    const { supervisor, children, last } = setUp();
    supervisor.start();
    const first = last();
    first.listen(1111);
    const restarted = supervisor.restart();
    first.exit(0);
    await restarted;
    first.listen(2222);
    first.exit(1);
    expect(children).toHaveLength(2);
    expect(supervisor.state()).toEqual({ phase: 'starting', attempt: 2 });
  });
});
