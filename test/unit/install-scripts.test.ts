import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The install scripts' apt-get step on machines that cannot install: each stops with a sentence
 * that says why and what to run, never a bare "sudo: not found". The machine is a PATH of its own
 * whose `id`, `sudo` and `apt-get` are scripts written by the test.
 */

const LIB = resolve('scripts/lib/apt-install.sh');
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function machine(tools: Record<string, string>): string {
  const bin = mkdtempSync(join(tmpdir(), 'courtier-apt-'));
  dirs.push(bin);
  for (const name of ['bash', 'cat', 'true'])
    symlinkSync(
      spawnSync('bash', ['-c', `command -v ${name}`])
        .stdout.toString()
        .trim(),
      join(bin, name),
    );
  for (const [name, body] of Object.entries(tools)) {
    writeFileSync(join(bin, name), `#!${join(bin, 'bash')}\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

function install(bin: string) {
  const run = spawnSync(
    join(bin, 'bash'),
    ['-c', `set -euo pipefail; . ${LIB}; apt_install "needed by the hub's tests" postgresql; echo installed`],
    {
      env: { PATH: bin },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return { status: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

const asUser = 'echo 1000';
const asRoot = 'echo 0';

describe('apt_install', () => {
  it('without apt-get: says so and what to do', () => {
    const result = install(machine({ id: asRoot }));
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      "Cannot install postgresql (needed by the hub's tests): this machine has no apt-get. Install them with your system's package manager, then run the command again.\n",
    );
  });

  it('not root and no sudo: names the command to run as root', () => {
    const result = install(machine({ id: asUser, 'apt-get': 'exit 0' }));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('it needs root, and sudo is not installed. Run as root: apt-get install postgresql');
    expect(result.stderr).not.toContain('not found');
  });

  it('sudo that wants a password, without a terminal: fails at once and says so', () => {
    const result = install(machine({ id: asUser, 'apt-get': 'exit 0', sudo: '[ "$1" = -n ] && exit 1; exec "$@"' }));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'sudo asks for a password and there is no terminal to type it in. Run: sudo apt-get install postgresql',
    );
  });

  it('a mirror out of reach: says the package lists could not be read', () => {
    const result = install(machine({ id: asRoot, 'apt-get': '[ "$1" = update ] && exit 100; exit 0' }));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("apt-get could not read Debian's package lists");
  });

  it('installs through sudo when it may, and as root directly', () => {
    const log = join(mkdtempSync(join(tmpdir(), 'courtier-apt-log-')), 'calls');
    dirs.push(join(log, '..'));
    const aptGet = `echo "apt-get $*" >> ${log}`;
    expect(
      install(machine({ id: asUser, 'apt-get': aptGet, sudo: '[ "$1" = -n ] && exit 0; echo sudo >> ' + log + '; exec "$@"' })).stdout,
    ).toContain('installed');
    expect(install(machine({ id: asRoot, 'apt-get': aptGet })).stdout).toContain(
      "Installing Debian's postgresql (needed by the hub's tests)…\ninstalled",
    );
    const calls = spawnSync('cat', [log]).stdout.toString();
    expect(calls).toBe(
      'sudo\napt-get update -qq\nsudo\napt-get install -y -qq postgresql\napt-get update -qq\napt-get install -y -qq postgresql\n',
    );
  });
});
