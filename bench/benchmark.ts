import type { ChildOptions } from './lib/child.js';
import type { LoadOptions } from './lib/load.js';

export interface BenchContext {
  load: LoadOptions;
  child: ChildOptions;
  /** Makes a fresh folder (a data dir) inside the run's temp dir, removed at the end of the run. */
  tempDir(name: string): string;
}

export interface BenchOutcome {
  /** Whether the benchmark's goal was met; a miss is reported, not an error. */
  goalMet: boolean;
  /** One line for the end-of-run summary. */
  summary: string;
}

/** One benchmark = one file in bench/ exporting one of these, listed in bench/run.ts. */
export interface Benchmark {
  name: string;
  /** What is measured, for --list and the header of its output. */
  description: string;
  run(ctx: BenchContext): Promise<BenchOutcome>;
}
