import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { registerCleanup } from './cleanup.js';
import { CPU_REQUEST, parseChildMessage, type ChildMessage, type TargetName } from './protocol.js';

const CHILD_SCRIPT = fileURLToPath(new URL('../server-child.js', import.meta.url));
/** Opening SQLite, migrating and hashing the cabinet password take well under a second; 30 s means stuck. */
const READY_TIMEOUT_MS = 30_000;
/** A child that ignores SIGTERM this long is killed. */
const STOP_TIMEOUT_MS = 3_000;

export interface ServerChild {
  /** http://127.0.0.1:<port>: autocannon then sends Host 127.0.0.1:<port>, the only Host the app accepts. */
  origin: string;
  headers: Record<string, string>;
  /** The child's process id (to pin it to a CPU). */
  pid: number;
  /** CPU time (user + system) the child has used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

export interface ChildOptions {
  /** Where to write a V8 CPU profile of the child (node --cpu-prof), if wanted. */
  cpuProfDir?: string;
  /**
   * For Linux perf: node --perf-basic-prof writes /tmp/perf-<pid>.map, which names JIT-compiled
   * functions, and V8 then also writes a log file per isolate in its working directory: `v8LogDir`.
   */
  perfMap?: { v8LogDir: string };
  /** The server child script of another build (a variant's dist/bench/server-child.js); this build's by default. */
  script?: string;
}

type Child = ChildProcessByStdio<Writable, Readable, null>;

function spawnChild(target: TargetName, dataDir: string, options: ChildOptions): Child {
  const nodeFlags = [
    ...(options.cpuProfDir
      ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`, `--cpu-prof-name=${target}-${Date.now()}.cpuprofile`]
      : []),
    ...(options.perfMap ? ['--perf-basic-prof'] : []),
  ];
  // stdin is our lifeline to the child: it exits when it closes, even if this process is SIGKILLed.
  return spawn(process.execPath, [...nodeFlags, options.script ?? CHILD_SCRIPT, target, dataDir], {
    stdio: ['pipe', 'pipe', 'inherit'],
    ...(options.perfMap ? { cwd: options.perfMap.v8LogDir } : {}),
  });
}

/** Reads the child's stdout one message at a time; rejects if the child exits or stays silent. */
function messageReader(child: Child, target: TargetName): (timeoutMs: number) => Promise<ChildMessage> {
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = once(child, 'exit').then(([code, signal]: unknown[]) => {
    throw new Error(`server child "${target}" exited (code ${String(code)}, signal ${String(signal)})`);
  });
  exited.catch(() => undefined); // Only observed through the race below.
  return async (timeoutMs) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`server child "${target}" did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const next = await Promise.race([lines.next(), exited, timeout]);
      if (next.done) throw new Error(`server child "${target}" closed its stdout`);
      return parseChildMessage(next.value);
    } finally {
      clearTimeout(timer);
    }
  };
}

async function stopChild(child: Child): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.stdin.end();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Starts a target in its own Node process and waits until it listens. */
export async function startServerChild(target: TargetName, dataDir: string, options: ChildOptions = {}): Promise<ServerChild> {
  const child = spawnChild(target, dataDir, options);
  const unregister = registerCleanup({ run: () => stopChild(child), runSync: () => void child.kill('SIGKILL') });
  const stop = async () => {
    try {
      await stopChild(child);
    } finally {
      unregister();
    }
  };
  const nextMessage = messageReader(child, target);
  try {
    const ready = await nextMessage(READY_TIMEOUT_MS);
    if (ready.type !== 'ready') throw new Error(`server child "${target}" spoke before it was ready`);
    return {
      origin: `http://127.0.0.1:${ready.port}`,
      headers: ready.headers,
      pid: child.pid ?? 0,
      async cpuMicros() {
        child.stdin.write(`${CPU_REQUEST}\n`);
        const answer = await nextMessage(5_000);
        if (answer.type !== 'cpu') throw new Error(`server child "${target}" answered ${answer.type} to cpu`);
        return answer.micros;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
