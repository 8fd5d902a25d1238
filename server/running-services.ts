import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';

/**
 * The services running for this OS user, each with its URL and data dir, so that a `courtier`
 * command run from another terminal can tell when it writes to a data dir no running service reads
 * (an API key made there would be refused by the service). Each service writes one small file, named
 * after its process id, in a per-user runtime folder, and removes it when it stops; a file left by a
 * killed process is recognised by its dead process id and removed by the next reader.
 */

const runningServiceSchema = z.object({
  pid: z.int().positive(),
  url: z.string().min(1),
  data_dir: z.string().min(1),
  started_at: z.string(),
});
export type RunningService = z.infer<typeof runningServiceSchema>;

/** The per-user folder of running services: under XDG_RUNTIME_DIR on Linux when set, else in the OS temp folder. */
export function runningServicesDir(env: NodeJS.ProcessEnv = process.env, uid: number | undefined = process.getuid?.()): string {
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'courtier', 'services');
  return join(tmpdir(), `courtier-${uid ?? 'user'}`, 'services');
}

/**
 * Whether the folder and its parent are this user's own: real directories (not links) that no other
 * user owns, so that nobody else can plant or swap entries in them (in a shared temp folder, someone
 * could create `courtier-<uid>` first).
 */
function ownFolder(dir: string, uid: number | undefined): boolean {
  return [dir, dirname(dir)].every((folder) => {
    try {
      const stat = lstatSync(folder);
      return stat.isDirectory() && !stat.isSymbolicLink() && (uid === undefined || stat.uid === uid);
    } catch {
      return false;
    }
  });
}

/** Registers a running service; returns what removes its entry (called when it stops). A folder that cannot be written leaves the service unregistered, never stopped. */
export function registerRunningService(dir: string, service: RunningService, uid: number | undefined = process.getuid?.()): () => void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!ownFolder(dir, uid)) return () => undefined;
    const file = join(dir, `${service.pid}.json`);
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, `${JSON.stringify(service)}\n`, { mode: 0o600 });
    renameSync(partial, file);
    return () => rmSync(file, { force: true });
  } catch {
    return () => undefined;
  }
}

/** Whether a process id is alive (EPERM: alive, another user's). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The services running now; entries of dead processes are removed, unreadable ones skipped. */
export function listRunningServices(
  dir: string,
  alive: (pid: number) => boolean = processAlive,
  uid: number | undefined = process.getuid?.(),
): RunningService[] {
  if (!ownFolder(dir, uid)) return [];
  const services: RunningService[] = [];
  for (const name of readdirSync(dir)) {
    if (!/^\d+\.json$/.test(name)) continue;
    const file = join(dir, name);
    let entry: RunningService;
    try {
      entry = runningServiceSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      continue;
    }
    if (alive(entry.pid)) services.push(entry);
    else rmSync(file, { force: true });
  }
  return services;
}

/** A data dir as one path, whatever the spelling (relative, a link, a trailing slash). */
export function canonicalDataDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}
