import Sqlite from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputCancelled, readHiddenLine, type TerminalInput } from '../../server/cli/hidden-input.js';
import { databaseFile } from '../../server/platform/db/open.js';
import { packageRoot } from '../../server/paths.js';
import { verifyPassword } from '../../server/tenancy/passwords.js';
import { tempDir } from '../helpers/server.js';

/** The built CLI run in a pseudo-terminal (python3's pty): what the screen showed, once `keys` were typed at `expect`. */
function inTerminal(args: string[], expect: string, keys: string): { screen: string; status: number; typed: boolean } {
  const spec = {
    argv: [process.execPath, join(packageRoot(), 'dist', 'server', 'cli.js'), ...args],
    env: { COURTIER_LOG_LEVEL: 'silent' },
    expect,
    keys,
  };
  const out = execFileSync('python3', [join(packageRoot(), 'test', 'fixtures', 'in-terminal.py'), JSON.stringify(spec)], {
    encoding: 'utf8',
    timeout: 40_000,
  });
  return JSON.parse(out) as { screen: string; status: number; typed: boolean };
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('--password-stdin at a terminal', () => {
  it('prompts on the terminal and never shows what is typed; Backspace erases', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const run = inTerminal(
      ['init', '--data-dir', dir, '--cabinet', 'Terminal', '--email', 'tty@example.fr', '--password-stdin'],
      'Password (not shown): ',
      'correct horsf\u007fe battery\r',
    );
    expect(run.typed).toBe(true);
    expect(run.status, run.screen).toBe(0);
    expect(run.screen).toContain('Password (not shown): ');
    expect(run.screen).toContain('Cabinet "Terminal" created.');
    for (const fragment of ['correct', 'horse', 'horsf', 'battery']) expect(run.screen).not.toContain(fragment);
    const db = new Sqlite(databaseFile(dir), { readonly: true });
    const { password_hash } = db.prepare('SELECT password_hash FROM users').get() as { password_hash: string };
    db.close();
    expect(await verifyPassword('correct horse battery', password_hash)).toBe(true);
  });

  it('Ctrl-C at the prompt cancels: nothing is created', () => {
    const dir = tempDir();
    dirs.push(dir);
    const run = inTerminal(
      ['init', '--data-dir', dir, '--cabinet', 'Cancelled', '--email', 'tty@example.fr', '--password-stdin'],
      'Password (not shown): ',
      'half typed\u0003',
    );
    expect(run.status).toBe(1);
    expect(run.screen).toContain('courtier: cancelled at the password prompt (Ctrl-C)');
    expect(run.screen).not.toContain('half');
    expect(existsSync(databaseFile(dir))).toBe(false);
  });

  it('insurers set-credentials names the login and the insurer in its prompt', () => {
    const dir = tempDir();
    dirs.push(dir);
    const run = inTerminal(
      [
        'insurers',
        'set-credentials',
        '--data-dir',
        dir,
        '--cabinet',
        '00000000-0000-4000-8000-000000000000',
        '--compagnie',
        'sandbox',
        '--login',
        'demo',
        '--password-stdin',
      ],
      'Password of demo at sandbox (not shown): ',
      'p@ss word\r',
    );
    expect(run.typed).toBe(true);
    expect(run.screen).not.toContain('p@ss');
  });
});

describe('readHiddenLine', () => {
  function terminal(): TerminalInput & EventEmitter & { modes: boolean[] } {
    const input = Object.assign(new EventEmitter(), {
      modes: [] as boolean[],
      setRawMode(mode: boolean) {
        input.modes.push(mode);
      },
      setEncoding: () => undefined,
      resume: () => undefined,
      pause: () => undefined,
    });
    return input;
  }

  it('ignores escape sequences and control keys, Ctrl-U clears the line, Ctrl-D ends like Enter, and raw mode is set before the prompt and undone', async () => {
    const input = terminal();
    const shown: string[] = [];
    const line = readHiddenLine(input, (text) => shown.push(`${input.modes.length}:${text}`), 'Password: ');
    for (const chunk of ['wrong', '\u0015', 'pa', '\u001b[D', '\u0007ss', 'é\u0004', 'after']) input.emit('data', chunk);
    expect(await line).toBe('passé');
    expect(input.modes).toEqual([true, false]);
    expect(shown).toEqual(['1:Password: ', '2:\n']);
    expect(input.listenerCount('data')).toBe(0);
  });

  it('Ctrl-C rejects with InputCancelled and restores the terminal', async () => {
    const input = terminal();
    const line = readHiddenLine(input, () => undefined, 'Password: ');
    input.emit('data', 'abc\u0003');
    await expect(line).rejects.toBeInstanceOf(InputCancelled);
    expect(input.modes).toEqual([true, false]);
  });
});
