/**
 * One benchmark target alone in its own process, so that the load generator in the parent does
 * not share its event loop (nor, on a 2-core machine, its core).
 *
 *   node dist/bench/server-child.js <target> <dataDir>
 *
 * Prints a ReadyMessage line on stdout once listening, answers each "cpu" line on stdin with a
 * CpuMessage, and exits when stdin closes (the parent is gone, even if it was killed) or on
 * SIGINT/SIGTERM. Exiting through process.exit lets --cpu-prof write its profile.
 */
import { createInterface } from 'node:readline';
import { CPU_REQUEST, isTargetName, type ChildMessage } from './lib/protocol.js';
import { TARGETS, type StartedTarget } from './targets.js';

function send(message: ChildMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

function exitOnParentOrSignal(target: StartedTarget): void {
  let exiting = false;
  const exit = (code: number) => {
    if (exiting) return;
    exiting = true;
    // The parent removes the data dir; closing here only stops the server cleanly, bounded in time.
    const timer = setTimeout(() => process.exit(code), 2_000);
    timer.unref();
    void target.close().finally(() => process.exit(code));
  };
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() === CPU_REQUEST) send({ type: 'cpu', micros: cpuMicros() });
  });
  lines.on('close', () => exit(0));
  process.on('SIGINT', () => exit(0));
  process.on('SIGTERM', () => exit(0));
}

async function main(): Promise<void> {
  const [targetName, dataDir] = process.argv.slice(2);
  if (targetName === undefined || !isTargetName(targetName) || dataDir === undefined) {
    throw new Error(`usage: server-child.js <${Object.keys(TARGETS).join('|')}> <dataDir>`);
  }
  const target = await TARGETS[targetName](dataDir);
  exitOnParentOrSignal(target);
  send({ type: 'ready', port: target.port, headers: target.headers });
}

main().catch((err: unknown) => {
  console.error('server child failed:', err);
  process.exit(1);
});
