/**
 * Things to undo however the run ends: server children to stop, temp dirs to remove. A normal
 * run undoes each in a finally; Ctrl-C and crashes go through runCleanups (async, bounded) and,
 * as a last resort, the synchronous halves registered here run on process exit.
 */
export interface CleanupTask {
  /** Graceful undo (wait for a child to exit, then remove its files). */
  run(): Promise<void>;
  /** What can still be done synchronously on 'exit' (SIGKILL, rmSync). */
  runSync(): void;
}

const tasks = new Set<CleanupTask>();

/** Registers a task; the returned function unregisters it once it has been done normally. */
export function registerCleanup(task: CleanupTask): () => void {
  tasks.add(task);
  return () => void tasks.delete(task);
}

/** Runs the pending tasks, newest first (children before the dirs they write in). */
export async function runCleanups(): Promise<void> {
  const pending = [...tasks].reverse();
  tasks.clear();
  for (const task of pending) {
    try {
      await task.run();
    } catch (err) {
      console.error('cleanup failed:', err);
    }
  }
}

function runCleanupsSync(): void {
  const pending = [...tasks].reverse();
  tasks.clear();
  for (const task of pending) {
    try {
      task.runSync();
    } catch {
      // Exiting anyway: nothing better to do with the error.
    }
  }
}

process.on('exit', runCleanupsSync);

/** Ctrl-C (which npm may forward a second time) and SIGTERM stop the children and remove temp files before exiting. */
export function exitCleanlyOnSignals(): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping the servers and removing temp files`);
    void runCleanups().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
