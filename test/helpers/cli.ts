import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { packageRoot } from '../../server/paths.js';

/** The built CLI (npm test builds first), run as a user would run it. */
const CLI = join(packageRoot(), 'dist', 'server', 'cli.js');

/** The same CLI with scripted insurers, run from source (see the fixture). */
export const CLI_WITH_TEST_INSURERS = ['--import', 'tsx', join(packageRoot(), 'test', 'fixtures', 'courtier-with-test-insurers.ts')];

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCourtier(
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; entry?: string[] } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.entry ?? [CLI]), ...args], {
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A pairing code from `courtier hub invite` on the hub's database: to register a new cabinet, or to join one. */
export async function hubInvite(databaseUrl: string, target: { register: string } | { join: string }): Promise<string> {
  const args = [
    'hub',
    'invite',
    '--database-url',
    databaseUrl,
    '--json',
    ...('join' in target ? ['--cabinet', target.join] : ['--new-cabinet', target.register]),
  ];
  const result = await runCourtier(args);
  expect(result.code, `courtier ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return String((JSON.parse(result.stdout) as { code: string }).code);
}

/** Stops a child with SIGTERM and waits for it to exit; a child never started is nothing to stop. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Starts `courtier serve` on a free port; resolves once it logs its URL. */
export function startServeProcess(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  entry: string[] = [CLI],
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entry, 'serve', '--port', '0', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 15_000);
    const onData = (c: Buffer) => {
      output += c.toString();
      const match = /Courtier listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: match[1], output: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${output}`));
    });
  });
}

/** Starts `courtier hub serve` (the built CLI) on a free port; resolves once it logs its URL. */
export function startHubServeProcess(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'hub', 'serve', '--port', '0', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`hub serve did not start:\n${output}`)), 20_000);
    const onData = (c: Buffer) => {
      output += c.toString();
      const match = /Courtier hub listening on (http:\/\/\S+)"/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: match[1], output: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`hub serve exited with ${code}:\n${output}`));
    });
  });
}

/** `courtier init`'s arguments: a new cabinet and its admin, the password on the command line. */
export function initArgs(cabinet: string, email: string): string[] {
  return ['init', '--cabinet', cabinet, '--email', email, '--password', 'a long password'];
}

/** `courtier keys create`'s arguments: a key of the cabinet with those scopes (comma-separated), a production key named k unless told. */
export function keyArgs(cabinet: string, scopes: string, { name = 'k', env = 'prod' } = {}): string[] {
  return ['keys', 'create', '--cabinet', cabinet, '--name', name, '--env', env, '--scopes', scopes];
}

/** `courtier sync connect`'s arguments: the cabinet connected to the hub with an invitation code, from the computer "Poste A". */
export function syncConnectArgs(cabinet: string, hubUrl: string, code: string): string[] {
  return ['sync', 'connect', '--cabinet', cabinet, '--hub', hubUrl, '--code', code, '--name', 'Poste A'];
}

/** `courtier sync join`'s arguments: a second computer, "Poste B", joins the cabinet on the hub as `email` (the password on stdin). */
export function syncJoinArgs(hubUrl: string, code: string, email: string): string[] {
  return ['sync', 'join', '--hub', hubUrl, '--code', code, '--email', email, '--password-stdin', '--name', 'Poste B'];
}

/**
 * `courtier` with the test insurers, run with `env`, its `--json` answer parsed; a run that does
 * not exit 0 fails the test with its stderr.
 */
export function jsonCli(env: Record<string, string>): (args: string[], input?: string) => Promise<Record<string, unknown>> {
  return async (args, input) => {
    const res = await runCourtier([...args, '--json'], { env, entry: CLI_WITH_TEST_INSURERS, ...(input === undefined ? {} : { input }) });
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout) as Record<string, unknown>;
  };
}
