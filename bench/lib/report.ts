import type { Measurement } from './load.js';

/** Columns: the first left-aligned (names), the others right-aligned (numbers). */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, col) => Math.max(h.length, ...rows.map((r) => (r[col] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, col) => (col === 0 ? cell.padEnd(widths[col] ?? 0) : cell.padStart(widths[col] ?? 0))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const MEASUREMENT_HEADER = [
  'target',
  'req/s',
  'p50 ms',
  'p99 ms',
  'requests',
  'server CPU',
  'µs CPU/req',
  'autocannon CPU',
  'other CPU',
] as const;

/** Server CPU per response, in µs: unlike req/s, it does not move when the load generator or another process is the limit. */
export function cpuPerRequest(m: Measurement): number {
  return (m.serverCores * 1e6) / m.requestsPerSecond;
}

export function measurementRow(name: string, m: Measurement): string[] {
  return [
    name,
    integer.format(m.requestsPerSecond),
    m.p50Ms.toFixed(2),
    m.p99Ms.toFixed(2),
    integer.format(m.requests),
    `${Math.round(m.serverCores * 100)}%`,
    cpuPerRequest(m).toFixed(1),
    `${Math.round(m.loadCores * 100)}%`,
    `${Math.round(m.otherCores * 100)}%`,
  ];
}

/** Above this share of one core used by other processes, the figures are not worth recording. */
export const BUSY_MACHINE_CORES = 0.15;

/** A warning to print under the table when the machine was not quiet, or undefined. */
export function busyMachineWarning(measurements: readonly Measurement[]): string | undefined {
  const worst = Math.max(...measurements.map((m) => m.otherCores));
  if (worst <= BUSY_MACHINE_CORES) return undefined;
  return `WARNING: other processes took up to ${Math.round(worst * 100)}% of a core during a measured run; run again on a quiet machine before recording these figures`;
}

/** "<what was measured against its goal>: met" or ": MISSED". */
export function goalLine(line: string, met: boolean): string {
  return `${line}: ${met ? 'met' : 'MISSED'}`;
}
