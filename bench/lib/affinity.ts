import { execFileSync } from 'node:child_process';

/**
 * Pins processes (every thread of each) to some CPUs with util-linux's taskset, as a list such as
 * "0" or "1-3". Processes started later by a pinned one inherit its CPUs. Returns false where that
 * cannot be done (no taskset, not Linux), and the caller says so.
 */
export function pinToCpus(pids: readonly number[], cpus: string): boolean {
  try {
    for (const pid of pids) execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
