import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { freePort } from './free-port.js';

/**
 * The one way tests get PostgreSQL: a throwaway cluster of Debian's postgresql in a temp dir, on a
 * free loopback port, trust authentication, fsync off (a crash of the test machine loses nothing
 * anyone wants; a crash of PostgreSQL loses nothing committed). Each test file starts its own, so files never share state and run in parallel.
 * The benchmarks ask for a durable one (`durable: true`): PostgreSQL's defaults, each commit flushed
 * to disk, as a hub runs in production.
 */
export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres — the maintenance database. */
  url: string;
  /** A fresh empty database; returns its URL. */
  createDatabase(): Promise<string>;
  /** pg_ctl restart (fast): every connection is dropped, the data stays. */
  restart(): Promise<void>;
  /** pg_ctl stop -m immediate: PostgreSQL crashes (no checkpoint); what was committed survives, the machine did not lose power. */
  stopImmediate(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and removes its directory. */
  stop(): Promise<void>;
}

const run = promisify(execFile);

/** Debian installs each major version under /usr/lib/postgresql/<major>/bin; the newest wins. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors[0] === undefined)
    throw new Error('PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl): run `bash scripts/install-postgresql.sh`.');
  return join(root, majors[0], 'bin');
}

/** initdb and the server refuse to run as root: run them as the postgres user then. */
function asClusterUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

async function exec(command: string, args: string[]): Promise<void> {
  const [file, argv] = asClusterUser(command, args);
  await run(file, argv, { timeout: 60_000 });
}

interface TestPostgresOptions {
  /**
   * fsync, synchronous_commit and full_page_writes on (PostgreSQL's defaults): every commit waits
   * for its WAL to reach the disk. For measuring what a commit costs; tests leave it off.
   */
  durable?: boolean;
}

export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'courtier-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  // A test process that dies before stop() must not leave a server running on the machine.
  const onExit = () => {
    const [file, argv] = asClusterUser(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'immediate']);
    spawnSync(file, argv, { stdio: 'ignore' });
    removeDir();
  };
  try {
    if (process.getuid?.() === 0)
      chownSync(
        dir,
        Number(spawnSync('id', ['-u', 'postgres']).stdout.toString()),
        Number(spawnSync('id', ['-g', 'postgres']).stdout.toString()),
      );
    await exec(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
      ...(options.durable ? [] : ['--no-sync']),
    ]);
    const port = await freePort();
    // Tests: fsync off, only a crash of the machine loses data. synchronous_commit stays on, so that a
    // committed transaction is in the WAL (the OS's cache) and survives stopImmediate(), a crash of PostgreSQL.
    const durability = options.durable
      ? ['fsync=on', 'synchronous_commit=on', 'full_page_writes=on']
      : ['fsync=off', 'full_page_writes=off'];
    const settings = ['listen_addresses=127.0.0.1', ...durability, 'max_connections=200'];
    const serverOptions = ['-p', String(port), '-k', dir, ...settings.flatMap((setting) => ['-c', setting])].join(' ');
    const start = () => exec(join(bin, 'pg_ctl'), ['start', '-D', data, '-l', log, '-w', '-t', '60', '-o', serverOptions]);
    const stopWith = (mode: 'fast' | 'immediate') => exec(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', mode, '-w']);
    await start().catch((err: unknown) => {
      throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
    });
    process.once('exit', onExit);
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    let databases = 0;
    return {
      url,
      async createDatabase() {
        const name = `test_${process.pid}_${++databases}`;
        const admin = postgres(url, { max: 1, onnotice: () => undefined });
        try {
          await admin.unsafe(`CREATE DATABASE ${name}`);
        } finally {
          await admin.end();
        }
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
      // Stop then start: `pg_ctl restart` waited out its whole timeout here before reporting success.
      restart: () => stopWith('fast').then(start),
      stopImmediate: () => stopWith('immediate'),
      start,
      async stop() {
        process.removeListener('exit', onExit);
        try {
          await stopWith('fast');
        } catch {
          // Already stopped (stopImmediate, or a failed start): the directory goes all the same.
        } finally {
          removeDir();
        }
      },
    };
  } catch (err) {
    process.removeListener('exit', onExit);
    onExit();
    throw err;
  }
}
