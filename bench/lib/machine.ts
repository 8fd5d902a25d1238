import { arch, cpus, platform, totalmem } from 'node:os';

/**
 * Idle time of the whole machine, summed over its CPUs, in microseconds. With the server's and
 * autocannon's own CPU time it tells how much the rest of the machine took during a run: on a
 * 2-core machine anything else running (a test suite, a compiler) halves the figures silently.
 */
export function machineIdleMicros(): number {
  return cpus().reduce((sum, cpu) => sum + cpu.times.idle, 0) * 1000;
}

export function cpuCount(): number {
  return cpus().length;
}

/** One line describing where the figures come from, printed before each benchmark. */
export function describeMachine(): string {
  const gib = Math.round(totalmem() / 2 ** 30);
  return `${cpuCount()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown model'}), ${gib} GiB, Node ${process.version}, ${platform()} ${arch()}`;
}
