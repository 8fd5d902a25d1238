import Sqlite from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { apiKeySummarySchema, createdApiKeySchema, meResponseSchema } from '../../shared/api-keys.js';
import { databaseFile } from '../../server/platform/db/open.js';
import { verifyPassword } from '../../server/tenancy/passwords.js';
import { CLI_WITH_TEST_INSURERS, runCourtier, startServeProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const dataDir = tempDir();
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function initCabinet(name: string, email: string): Promise<string> {
  const res = await runCourtier([
    'init',
    '--data-dir',
    dataDir,
    '--cabinet',
    name,
    '--email',
    email,
    '--password',
    'a long password',
    '--json',
  ]);
  expect(res.code, res.stderr).toBe(0);
  return (JSON.parse(res.stdout) as { cabinet_id: string }).cabinet_id;
}

function onlyJsonObject(stdout: string): Record<string, unknown> {
  expect(stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('courtier CLI', () => {
  it('init prints exactly one JSON object and adds cabinets to an existing data dir', async () => {
    const res = await runCourtier([
      'init',
      '--data-dir',
      dataDir,
      '--cabinet',
      'Dupont',
      '--email',
      'Admin@Dupont.fr',
      '--password',
      'a long password',
      '--json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const first = onlyJsonObject(res.stdout);
    expect(Object.keys(first).sort()).toEqual(['cabinet_id', 'user_id']);
    const second = await initCabinet('Martin', 'admin@martin.fr');
    expect(second).not.toBe(first.cabinet_id);
    const db = new Sqlite(databaseFile(dataDir), { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM cabinets').get()).toEqual({ n: 2 });
    const user = db.prepare('SELECT email, password_hash FROM users WHERE id = ?').get(first.user_id) as {
      email: string;
      password_hash: string;
    };
    db.close();
    expect(user.email).toBe('admin@dupont.fr');
    expect(user.password_hash).not.toContain('a long password');
    expect(await verifyPassword('a long password', user.password_hash)).toBe(true);
  });

  it('init --password-stdin drops one trailing newline', async () => {
    const dir = tempDir();
    const res = await runCourtier(['init', '--data-dir', dir, '--cabinet', 'C', '--email', 'x@y.fr', '--password-stdin', '--json'], {
      input: 'stdin password\n',
    });
    expect(res.code, res.stderr).toBe(0);
    const db = new Sqlite(databaseFile(dir), { readonly: true });
    const { password_hash } = db.prepare('SELECT password_hash FROM users').get() as { password_hash: string };
    db.close();
    expect(await verifyPassword('stdin password', password_hash)).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });

  it('init creates a new cabinet even for an email that has an account in another one (emails are unique per cabinet)', async () => {
    const again = await initCabinet('Again', 'Admin@Dupont.fr');
    const db = new Sqlite(databaseFile(dataDir), { readonly: true });
    const accounts = db.prepare("SELECT cabinet_id FROM users WHERE email = 'admin@dupont.fr'").all() as { cabinet_id: string }[];
    db.close();
    expect(accounts).toHaveLength(2);
    expect(accounts.map((a) => a.cabinet_id)).toContain(again);
  });

  it('init refuses an invalid email (exit 1, the data dir and one line, nothing created)', async () => {
    const res = await runCourtier([
      'init',
      '--data-dir',
      dataDir,
      '--cabinet',
      'Broken',
      '--email',
      'not-an-email',
      '--password',
      'a long password',
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toEqual([
      `courtier: data dir ${dataDir} (from --data-dir)`,
      expect.stringMatching(/^courtier: .*email/),
    ]);
    const db = new Sqlite(databaseFile(dataDir), { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM cabinets WHERE name = 'Broken'").get()).toEqual({ n: 0 });
    db.close();
  });

  it('keys create / list / revoke, taking COURTIER_DATA_DIR too', async () => {
    const cabinet = await initCabinet('Keys', 'keys@example.fr');
    const env = { COURTIER_DATA_DIR: dataDir };
    const created = await runCourtier(
      [
        'keys',
        'create',
        '--cabinet',
        cabinet,
        '--name',
        'CRM sync',
        '--env',
        'test',
        '--scopes',
        'crm:read,crm:write',
        '--ip-allowlist',
        '127.0.0.1,::1/128',
        '--expires-at',
        '2099-01-01T00:00:00Z',
        '--json',
      ],
      { env },
    );
    expect(created.code, created.stderr).toBe(0);
    const key = createdApiKeySchema.parse(onlyJsonObject(created.stdout));
    expect(key.key).toMatch(/^svc_test_[0-9A-Za-z]{40}$/);
    expect(key.ip_allowlist).toEqual(['127.0.0.1', '::1/128']);

    const listed = await runCourtier(['keys', 'list', '--cabinet', cabinet, '--json'], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key.key);
    const keys = (onlyJsonObject(listed.stdout).keys as unknown[]).map((k) => apiKeySummarySchema.strict().parse(k));
    expect(keys.map((k) => k.key_id)).toEqual([key.key_id]);

    const revoked = await runCourtier(['keys', 'revoke', '--key-id', key.key_id, '--json'], { env });
    expect(revoked.code).toBe(0);
    expect(apiKeySummarySchema.parse(onlyJsonObject(revoked.stdout)).revoked_at).not.toBeNull();

    const human = await runCourtier(['keys', 'list', '--cabinet', cabinet], { env });
    expect(human.stdout).toMatch(/revoked/);
  });

  it('exits 2 with one line on stderr for bad arguments', async () => {
    const cases: string[][] = [
      ['frobnicate'],
      ['init', '--data-dir', dataDir, '--cabinet', 'X'],
      ['keys', 'create', '--data-dir', dataDir, '--cabinet', 'c', '--name', 'n', '--env', 'staging', '--scopes', 'crm:read'],
      ['keys', 'create', '--data-dir', dataDir, '--cabinet', 'c', '--name', 'n', '--env', 'prod', '--scopes', 'crm:read,admin'],
      [
        'keys',
        'create',
        '--data-dir',
        dataDir,
        '--cabinet',
        'c',
        '--name',
        'n',
        '--env',
        'prod',
        '--scopes',
        'crm:read',
        '--ip-allowlist',
        '999.1.1.1/8',
      ],
      ['keys', 'list', '--data-dir', dataDir, '--cabinet', 'c', '--unknown-flag'],
      ['keys', 'revoke', '--data-dir', dataDir, '--key-id', 'svc_prod_abc'],
      ['serve', '--port', 'not-a-port', '--data-dir', dataDir],
    ];
    const results = await Promise.all(cases.map((args) => runCourtier(args)));
    for (const [i, res] of results.entries()) {
      const args = (cases[i] ?? []).join(' ');
      expect(res.code, args).toBe(2);
      expect(res.stderr.trim().split('\n'), args).toHaveLength(1);
      expect(res.stderr).toMatch(/^courtier: /);
    }
  });

  it('keys create for an unknown cabinet fails with exit 1', async () => {
    const res = await runCourtier([
      'keys',
      'create',
      '--data-dir',
      dataDir,
      '--cabinet',
      '00000000-0000-4000-8000-000000000000',
      '--name',
      'n',
      '--env',
      'prod',
      '--scopes',
      'crm:read',
      '--json',
    ]);
    expect(res.code).toBe(1);
    expect(onlyJsonObject(res.stdout)).toMatchObject({ error: 'not_found' });
  });

  it('on a new install serve points to the console for the first-run setup (and to courtier init); once a cabinet exists it does not', async () => {
    const dir = tempDir();
    /** The serve's log lines up to its exit on SIGTERM. */
    async function serveLog(): Promise<{ url: string; lines: { level: number; msg: string; setupUrl?: string }[] }> {
      const server = await startServeProcess(['--data-dir', dir]);
      server.child.kill('SIGTERM');
      await once(server.child, 'exit');
      const lines = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; setupUrl?: string });
      return { url: server.url, lines };
    }
    try {
      const fresh = await serveLog();
      const hint = fresh.lines.find((line) => line.msg.startsWith('No cabinet yet'));
      expect(hint, JSON.stringify(fresh.lines)).toBeDefined();
      expect(hint?.setupUrl).toBe(`${fresh.url}/console/`);
      expect(hint?.msg).toContain(`open ${fresh.url}/console/ on this machine for the first-run setup`);
      expect(hint?.msg).toContain('courtier init --cabinet NAME --email E --password-stdin');
      expect(fresh.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      const init = await runCourtier([
        'init',
        '--data-dir',
        dir,
        '--cabinet',
        'Set up',
        '--email',
        'setup@example.fr',
        '--password',
        'a long password',
        '--json',
      ]);
      expect(init.code, init.stderr).toBe(0);
      const later = await serveLog();
      expect(later.lines.some((line) => line.msg.startsWith('Courtier listening on'))).toBe(true);
      expect(later.lines.some((line) => line.msg.startsWith('No cabinet yet'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('works while a server runs on the same data dir, and serve stops cleanly on SIGTERM', async () => {
    const cabinet = await initCabinet('Live', 'live@example.fr');
    const server = await startServeProcess(['--data-dir', dataDir]);
    try {
      const created = await runCourtier([
        'keys',
        'create',
        '--data-dir',
        dataDir,
        '--cabinet',
        cabinet,
        '--name',
        'live',
        '--env',
        'prod',
        '--scopes',
        'crm:read',
        '--json',
      ]);
      const key = createdApiKeySchema.parse(JSON.parse(created.stdout));
      const me = await fetch(`${server.url}/api/v1/public/me`, { headers: { 'X-API-Key': key.key } });
      expect(me.status).toBe(200);
      expect(meResponseSchema.parse(await me.json()).cabinet_id).toBe(cabinet);

      await runCourtier(['keys', 'revoke', '--data-dir', dataDir, '--key-id', key.key_id]);
      const after = await fetch(`${server.url}/api/v1/public/me`, { headers: { 'X-API-Key': key.key } });
      expect(after.status).toBe(401);
      expect(((await after.json()) as { error: string }).error).toBe('api_key_revoked');
    } finally {
      server.child.kill('SIGTERM');
      const [code] = (await once(server.child, 'exit')) as [number | null];
      expect(code).toBe(0);
      expect(server.output()).toContain('"msg":"stopped"');
    }
  });
});

describe('the data dir of the CLI and of the running service', () => {
  /** A serve on a data dir of its own, stopped (SIGTERM) after `body`. */
  async function withService(dir: string, body: (url: string) => Promise<void>): Promise<void> {
    const server = await startServeProcess(['--data-dir', dir]);
    try {
      await body(server.url);
    } finally {
      server.child.kill('SIGTERM');
      await once(server.child, 'exit');
    }
  }

  it('a command on another data dir than the running service says which it used and names the service and its data dir; a key made there is refused with a message that says why', async () => {
    const serviceDir = tempDir();
    const otherDir = tempDir();
    try {
      const serviceCabinet = await initCabinet('Service', 'service@example.fr');
      await withService(dataDir, async (url) => {
        const init = await runCourtier(
          ['init', '--cabinet', 'Elsewhere', '--email', 'e@example.fr', '--password', 'a long password', '--json'],
          { env: { COURTIER_DATA_DIR: otherDir } },
        );
        expect(init.code, init.stderr).toBe(0);
        const cabinet = (JSON.parse(init.stdout) as { cabinet_id: string }).cabinet_id;
        const created = await runCourtier(
          ['keys', 'create', '--cabinet', cabinet, '--name', 'n', '--env', 'prod', '--scopes', 'crm:read'],
          { env: { COURTIER_DATA_DIR: otherDir } },
        );
        expect(created.code, created.stderr).toBe(0);
        const lines = created.stderr.trim().split('\n');
        expect(lines[0]).toBe(`courtier: data dir ${otherDir} (from COURTIER_DATA_DIR)`);
        expect(lines[1]).toMatch(
          new RegExp(
            `^courtier: warning: the Courtier service at ${url} \\(pid \\d+\\) uses another data dir, ${dataDir}: it will not see what this command does\\. Run the command with --data-dir ${dataDir} `,
          ),
        );
        expect(lines).toHaveLength(2);
        const key = /svc_prod_\w+/.exec(created.stdout)?.[0] ?? '';
        const refused = await fetch(`${url}/api/v1/public/me`, { headers: { 'X-API-Key': key } });
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { message: string }).message).toContain('in another data folder, is unknown here');

        // The same data dir as the service: the data dir line only, and the key works there.
        const same = await runCourtier(
          ['keys', 'create', '--cabinet', serviceCabinet, '--name', 'n', '--env', 'prod', '--scopes', 'crm:read', '--json'],
          { env: { COURTIER_DATA_DIR: dataDir } },
        );
        expect(same.stderr).toBe(`courtier: data dir ${dataDir} (from COURTIER_DATA_DIR)\n`);
        const me = await fetch(`${url}/api/v1/public/me`, {
          headers: { 'X-API-Key': createdApiKeySchema.parse(JSON.parse(same.stdout)).key },
        });
        expect(me.status).toBe(200);

        // A second serve on the same port is refused with the holder named, and its data dir.
        const port = new URL(url).port;
        const second = await runCourtier(['serve', '--port', port, '--data-dir', serviceDir]);
        expect(second.code).toBe(1);
        expect(second.stderr).toMatch(
          new RegExp(
            `port ${port} on 127\\.0\\.0\\.1 is taken by the Courtier service at ${url} \\(pid \\d+, data dir ${dataDir}\\)\\. Stop it \\(Ctrl-C in its terminal\\)`,
          ),
        );
      });
      // Once the service has stopped, nothing is running: no warning.
      const after = await runCourtier(['keys', 'list', '--cabinet', serviceCabinet, '--json'], { env: { COURTIER_DATA_DIR: otherDir } });
      expect(after.stderr).toBe(`courtier: data dir ${otherDir} (from COURTIER_DATA_DIR)\n`);
    } finally {
      rmSync(serviceDir, { recursive: true, force: true });
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('a service killed with kill -9 is not taken for a running one', async () => {
    const server = await startServeProcess(['--data-dir', dataDir]);
    const otherDir = tempDir();
    try {
      const before = await runCourtier(['robots', 'status', '--data-dir', otherDir]);
      expect(before.stderr).toContain(`the Courtier service at ${server.url}`);
      server.child.kill('SIGKILL');
      await once(server.child, 'exit');
      const after = await runCourtier(['robots', 'status', '--data-dir', otherDir]);
      expect(after.stderr).toBe(`courtier: data dir ${otherDir} (from --data-dir)\n`);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});

describe('courtier settings', () => {
  it('turns LLM data sharing on and off, and says what integrations’ jobs do with nobody there', async () => {
    const cabinet = await initCabinet('Settings', 'settings@example.fr');
    const get = async () =>
      JSON.parse((await runCourtier(['settings', 'get', '--data-dir', dataDir, '--cabinet', cabinet, '--json'])).stdout) as {
        llm_data_sharing: boolean;
        unattended_human_steps: string;
      };
    const unset = { orias: null, address: null };
    expect(await get()).toEqual({ llm_data_sharing: false, unattended_human_steps: 'wait', ...unset });
    const on = await runCourtier(['settings', 'set', '--data-dir', dataDir, '--cabinet', cabinet, '--llm-data-sharing', 'on']);
    expect(on.code).toBe(0);
    expect(on.stdout).toMatch(/in clear/);
    expect(await get()).toEqual({ llm_data_sharing: true, unattended_human_steps: 'wait', ...unset });
    const stop = await runCourtier(['settings', 'set', '--data-dir', dataDir, '--cabinet', cabinet, '--unattended-human-steps', 'stop']);
    expect(stop.stdout).toMatch(/stops before its insurer's portal asks a person/);
    expect(await get()).toEqual({ llm_data_sharing: true, unattended_human_steps: 'stop', ...unset });
    // The cabinet as its advice documents print it; "" clears a value.
    const identity = await runCourtier([
      ...['settings', 'set', '--data-dir', dataDir, '--cabinet', cabinet],
      ...['--orias', '07012345', '--address', '3 rue de la Paix, 75002 Paris'],
    ]);
    expect(identity.stdout).toMatch(/ORIAS 07012345; address 3 rue de la Paix, 75002 Paris: printed on advice documents/);
    expect(await get()).toMatchObject({ orias: '07012345', address: '3 rue de la Paix, 75002 Paris' });
    expect((await runCourtier(['settings', 'set', '--data-dir', dataDir, '--cabinet', cabinet, '--orias', '123'])).code).toBe(2);
    await runCourtier(['settings', 'set', '--data-dir', dataDir, '--cabinet', cabinet, '--orias', '']);
    expect(await get()).toMatchObject({ orias: null, address: '3 rue de la Paix, 75002 Paris' });
    const bad = await runCourtier(['settings', 'set', '--data-dir', dataDir, '--cabinet', cabinet, '--llm-data-sharing', 'maybe']);
    expect(bad.code).toBe(2);
    expect(
      (await runCourtier(['settings', 'set', '--data-dir', dataDir, '--cabinet', cabinet, '--unattended-human-steps', 'never'])).code,
    ).toBe(2);
    expect((await runCourtier(['settings', 'set', '--data-dir', dataDir, '--cabinet', cabinet])).code).toBe(2);
  });
});

describe('courtier insurers, credits and robots', () => {
  const entry = CLI_WITH_TEST_INSURERS;
  it('sets credentials from standard input only, grants credits, and flips the kill switch', async () => {
    const cabinet = await initCabinet('Robots', 'robots@example.fr');
    const listed = await runCourtier(['insurers', 'list', '--data-dir', dataDir, '--json'], { entry });
    expect((JSON.parse(listed.stdout) as { insurers: { code: string }[] }).insurers.map((i) => i.code)).toEqual([
      'crash-before',
      'crash-after',
    ]);

    const onArgv = await runCourtier(
      [
        'insurers',
        'set-credentials',
        '--data-dir',
        dataDir,
        '--cabinet',
        cabinet,
        '--compagnie',
        'crash-before',
        '--login',
        'l',
        '--password',
        'visible',
      ],
      { entry },
    );
    expect(onArgv.code).toBe(2);
    const set = await runCourtier(
      [
        'insurers',
        'set-credentials',
        '--data-dir',
        dataDir,
        '--cabinet',
        cabinet,
        '--compagnie',
        'crash-before',
        '--login',
        'broker-7',
        '--password-stdin',
        '--json',
      ],
      { entry, input: 'p@ss word\n' },
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).not.toContain('p@ss');
    expect(JSON.parse(set.stdout)).toMatchObject({ compagnie: 'crash-before', login: 'broker-7' });
    const unknown = await runCourtier(
      [
        'insurers',
        'set-credentials',
        '--data-dir',
        dataDir,
        '--cabinet',
        cabinet,
        '--compagnie',
        'nobody',
        '--login',
        'l',
        '--password-stdin',
        '--json',
      ],
      { entry, input: 'x' },
    );
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: 'unknown_insurer' });
    // The password is in the encrypted store, nowhere in SQLite.
    const db = new Sqlite(databaseFile(dataDir), { readonly: true });
    expect(JSON.stringify(db.prepare('SELECT * FROM insurer_credentials').all())).not.toContain('p@ss');
    db.close();

    const granted = await runCourtier(['credits', 'grant', '--data-dir', dataDir, '--cabinet', cabinet, '--amount', '40', '--json']);
    expect(JSON.parse(granted.stdout)).toMatchObject({ granted: 40, balance: 40 });
    expect(
      JSON.parse((await runCourtier(['credits', 'balance', '--data-dir', dataDir, '--cabinet', cabinet, '--json'])).stdout),
    ).toMatchObject({ balance: 40 });
    expect((await runCourtier(['credits', 'grant', '--data-dir', dataDir, '--cabinet', cabinet, '--amount', '-3'])).code).toBe(2);

    expect((await runCourtier(['robots', 'disable', '--data-dir', dataDir, '--reason', 'portal maintenance'])).code).toBe(0);
    expect(JSON.parse((await runCourtier(['robots', 'status', '--data-dir', dataDir, '--json'])).stdout)).toMatchObject({
      robots_enabled: false,
      kill_switch: { reason: 'portal maintenance' },
    });
    expect((await runCourtier(['robots', 'enable', '--data-dir', dataDir])).code).toBe(0);
    expect(JSON.parse((await runCourtier(['robots', 'status', '--data-dir', dataDir, '--json'])).stdout)).toMatchObject({
      robots_enabled: true,
    });
  });
});
