import { readdirSync, readFileSync } from 'node:fs';

/**
 * The robots benchmark's view of a process and what it started, from /proc (Linux): their memory
 * (RSS, and PSS, shared pages counted once), their CPU, and the Chromium processes among them.
 */

interface ProcInfo {
  pid: number;
  ppid: number;
  comm: string;
}

function readProcs(): ProcInfo[] {
  const procs: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      procs.push({ pid: Number(name), ppid, comm });
    } catch {
      // The process ended meanwhile.
    }
  }
  return procs;
}

/** A field of /proc/<pid>/status or smaps_rollup in kB (0 if the process is gone). */
function kbField(path: string, field: string): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(path, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export interface MemorySample {
  serviceMb: number;
  childrenMb: number;
  totalMb: number;
  /** Proportional set size of the same processes: shared pages counted once. */
  pssMb: number;
  processes: number;
}

const isChromium = (p: ProcInfo) => /chrom|crashpad/i.test(p.comm);

/**
 * The service (this process) and its descendants. `exclude` takes a child that is not the
 * service's (the insurer portal's process) out of every figure, with its own descendants.
 */
export function createProcessTree(sampleEveryMs: number) {
  const root = process.pid;
  const excluded = new Set<number>();
  /** Every Chromium process seen as ours (descendants, and crashpad handlers reparented to init after the run started). */
  const seenChromium = new Set<number>();
  const chromiumBefore = new Set(
    readProcs()
      .filter(isChromium)
      .map((p) => p.pid),
  );

  function descendants(): ProcInfo[] {
    const procs = readProcs().filter((p) => !excluded.has(p.pid));
    const found: ProcInfo[] = [];
    let frontier = [root];
    while (frontier.length > 0) {
      const next = procs.filter((p) => frontier.includes(p.ppid));
      found.push(...next);
      frontier = next.map((p) => p.pid);
    }
    return found;
  }

  function sampleMemory(): MemorySample {
    const kids = descendants();
    const serviceMb = process.memoryUsage.rss() / 2 ** 20;
    const childrenMb = kids.reduce((sum, p) => sum + kbField(`/proc/${p.pid}/status`, 'VmRSS'), 0) / 1024;
    const pssMb = [root, ...kids.map((p) => p.pid)].reduce((sum, pid) => sum + kbField(`/proc/${pid}/smaps_rollup`, 'Pss'), 0) / 1024;
    return { serviceMb, childrenMb, totalMb: serviceMb + childrenMb, pssMb, processes: kids.length };
  }

  function noteChromium(): void {
    for (const p of descendants()) if (isChromium(p)) seenChromium.add(p.pid);
    for (const p of readProcs()) if (p.ppid === 1 && isChromium(p) && !chromiumBefore.has(p.pid)) seenChromium.add(p.pid);
  }

  return {
    exclude: (pid: number) => void excluded.add(pid),
    sampleMemory,
    noteChromium,
    /** The Chromium processes seen so far that are still running. */
    chromiumLeft(): { left: number[]; seen: number } {
      const alive = new Set(readProcs().map((p) => p.pid));
      return { left: [...seenChromium].filter((pid) => alive.has(pid)), seen: seenChromium.size };
    },

    /**
     * Samples memory every `sampleEveryMs`. Reading /proc for every process runs in this process,
     * which is also the service's: its own CPU is kept apart (`cpuSeconds`), so that the service's
     * figure is the service's alone (reading /proc would otherwise be most of it).
     */
    startSampler(): { stop(): MemorySample; cpuSeconds(): number } {
      let ownMicros = 0;
      const measured = <T>(work: () => T): T => {
        const before = process.cpuUsage();
        try {
          return work();
        } finally {
          const used = process.cpuUsage(before);
          ownMicros += used.user + used.system;
        }
      };
      let peak: MemorySample = measured(() => (noteChromium(), sampleMemory()));
      let peakPss = peak.pssMb;
      const timer = setInterval(() => {
        const s = measured(() => (noteChromium(), sampleMemory()));
        if (s.totalMb > peak.totalMb) peak = s;
        peakPss = Math.max(peakPss, s.pssMb);
      }, sampleEveryMs);
      return {
        stop() {
          clearInterval(timer);
          return { ...peak, pssMb: peakPss };
        },
        cpuSeconds: () => ownMicros / 1e6,
      };
    },

    /** CPU time (user + system, reaped children included) of the descendants, in seconds. */
    childrenCpuSeconds(): number {
      const ticks = 100; // USER_HZ on Linux
      let total = 0;
      for (const p of descendants()) {
        try {
          const stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          // After the comm: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
          total += [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
        } catch {
          // Gone meanwhile.
        }
      }
      return total / ticks;
    },
  };
}
