import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU of processes the benchmark did not spawn itself but must account for: the throwaway
 * PostgreSQL cluster, whose server runs detached (pg_ctl) with one backend process per connection.
 * Linux only (/proc); elsewhere the readers answer 0 and the figures say "n/a".
 */

const TICK_MICROS = (() => {
  try {
    return 1e6 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  } catch {
    return 10_000; // CLK_TCK is 100 on every Linux in practice.
  }
})();

interface Stat {
  ppid: number;
  /** utime + stime of the process itself, in ticks. */
  own: number;
  /** cutime + cstime: children it has waited for, in ticks. */
  reaped: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // Gone meanwhile.
  }
  // Fields after the command name, which may hold spaces and parentheses: from the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(fields[i] ?? 0);
  // fields[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17.
  return { ppid: n(1), own: n(11) + n(12), reaped: n(13) + n(14) };
}

function pids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

/** The postmaster of the cluster listening on `port`: the process started as `postgres … -p <port> …`. */
function findPostmaster(port: number): number | undefined {
  for (const pid of pids()) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!(argv[0] ?? '').endsWith('postgres')) continue;
    const flag = argv.indexOf('-p');
    if (flag >= 0 && argv[flag + 1] === String(port)) return pid;
  }
  return undefined;
}

/** The processes of the PostgreSQL cluster on `port` alive now: the postmaster and its children. */
export function postgresPids(port: number): number[] {
  const postmaster = findPostmaster(port);
  if (postmaster === undefined) return [];
  return [postmaster, ...pids().filter((pid) => readStat(pid)?.ppid === postmaster)];
}

/**
 * A reader of the CPU time, in µs, that the PostgreSQL cluster on `port` has used so far: the
 * postmaster, the backends and background workers alive now, and those that have exited (the
 * postmaster waits for each, so their time is in its cutime/cstime). Undefined when not found.
 */
export function postgresCpuReader(port: number): (() => number) | undefined {
  const postmaster = findPostmaster(port);
  if (postmaster === undefined) return undefined;
  return () => {
    const root = readStat(postmaster);
    if (!root) return 0;
    let ticks = root.own + root.reaped;
    for (const pid of pids()) {
      if (pid === postmaster) continue;
      const stat = readStat(pid);
      if (stat?.ppid === postmaster) ticks += stat.own;
    }
    return ticks * TICK_MICROS;
  };
}
