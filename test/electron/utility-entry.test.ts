import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runUtilityServer, type ParentPortLike, type UtilityServer } from '../../electron/utility-entry.js';
import type { ChildMessage, ParentMessage } from '../../electron/protocol.js';
import { jobRecords } from '../../server/automation/sync.js';
import { initCabinet } from '../../server/tenancy/service.js';
import type { KeyringBackend } from '../../server/secrets/keychain-store.js';
import { tempDir } from '../helpers/server.js';

/** The utility process's parentPort, in memory. */
function fakeParentPort() {
  const received: ChildMessage[] = [];
  const listeners: ((event: { data: unknown }) => void)[] = [];
  const port: ParentPortLike = {
    on: (_event, listener) => listeners.push(listener),
    postMessage: (message) => received.push(message),
  };
  return { port, received, send: (data: ParentMessage | unknown) => listeners.forEach((l) => l({ data })) };
}

const memoryKeyring = (): KeyringBackend => {
  const m = new Map<string, string>();
  return {
    get: (s, a) => m.get(`${s}/${a}`) ?? null,
    set: (s, a, v) => void m.set(`${s}/${a}`, v),
    delete: (s, a) => m.delete(`${s}/${a}`),
  };
};

async function until<T>(read: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

let running: UtilityServer | null = null;
afterEach(async () => {
  await running?.stop();
  running = null;
});

describe('the server in the utility process', () => {
  it('starts on 127.0.0.1 on a free port, reports it, hands out sign-ins, flips the kill switch and stops cleanly', async () => {
    const dataDir = tempDir();
    const token = randomBytes(32).toString('base64url');
    const parent = fakeParentPort();
    const exits: number[] = [];
    running = await runUtilityServer({
      port: parent.port,
      env: {
        COURTIER_DATA_DIR: dataDir,
        COURTIER_HOST: '127.0.0.1',
        COURTIER_PORT: '0',
        COURTIER_LOG_LEVEL: 'silent',
        COURTIER_DESKTOP_LOGIN_TOKEN_SHA256: createHash('sha256').update(token).digest('hex'),
      },
      exit: (code) => exits.push(code),
      keyring: memoryKeyring(),
      insurers: [],
      statusIntervalMs: 20,
    });
    expect(running).not.toBeNull();
    const server = running!;
    const listening = parent.received.find((m) => m.type === 'listening');
    expect(listening).toEqual({
      type: 'listening',
      port: server.port,
      host: '127.0.0.1',
      secret_store: 'keychain',
      secret_store_warning: null,
    });
    expect(parent.received.find((m) => m.type === 'status')).toEqual({
      type: 'status',
      status: { robots_enabled: true, kill_switch_reason: null, jobs: [] },
    });

    await initCabinet(server.deps, { cabinet: 'Cabinet Desktop', email: 'admin@desktop.fr', password: 'a long enough password' });
    const origin = `http://127.0.0.1:${server.port}`;
    const first = await fetch(`${origin}/console/desktop-login?token=${token}`, { redirect: 'manual' });
    expect(first.headers.get('location')).toBe('/console/');

    // A later token, handed over by the main process through the port.
    const later = randomBytes(32).toString('base64url');
    parent.send({ type: 'allow-login', request_id: 'r1', sha256: createHash('sha256').update(later).digest('hex') });
    expect(parent.received.find((m) => m.type === 'reply')).toEqual({ type: 'reply', request_id: 'r1', ok: true });
    expect((await fetch(`${origin}/console/desktop-login?token=${later}`, { redirect: 'manual' })).headers.get('location')).toBe(
      '/console/',
    );

    // The kill switch from the tray.
    parent.send({ type: 'set-robots', request_id: 'r2', enabled: false, reason: 'Paused from the tray' });
    const paused = await until(() => parent.received.find((m) => m.type === 'status' && !m.status.robots_enabled));
    expect(paused).toEqual({ type: 'status', status: { robots_enabled: false, kill_switch_reason: 'Paused from the tray', jobs: [] } });
    parent.send({ type: 'set-robots', request_id: 'r3', enabled: true });
    await until(() => {
      const last = parent.received.filter((m) => m.type === 'status').at(-1);
      return last?.type === 'status' && last.status.robots_enabled ? last : undefined;
    });

    // Malformed messages are ignored.
    parent.send({ type: 'allow-login', request_id: 'r4', sha256: 'nope' });
    parent.send('garbage');
    expect(parent.received.filter((m) => m.type === 'reply').map((m) => m.type === 'reply' && m.request_id)).toEqual(['r1', 'r2', 'r3']);

    parent.send({ type: 'stop' });
    await until(() => (exits.length ? exits : undefined));
    expect(exits).toEqual([0]);
    running = null;
    await expect(fetch(`${origin}/healthz`)).rejects.toThrow();
  });

  it('reports the jobs this install’s robots are on, not those another install of the cabinet runs (their code is asked there)', async () => {
    const parent = fakeParentPort();
    running = await runUtilityServer({
      port: parent.port,
      env: { COURTIER_DATA_DIR: tempDir(), COURTIER_HOST: '127.0.0.1', COURTIER_PORT: '0', COURTIER_LOG_LEVEL: 'silent' },
      exit: () => {},
      keyring: memoryKeyring(),
      insurers: [],
      statusIntervalMs: 20,
    });
    const deps = running!.deps;
    const { cabinet_id: cabinetId } = await initCabinet(deps, {
      cabinet: 'Cabinet Desktop',
      email: 'admin@desktop.fr',
      password: 'a long enough password',
    });
    const now = Date.now();
    const waiting = {
      compagnie: 'sandbox',
      produit: 'auto',
      dicData: '{}',
      requestHash: 'a'.repeat(64),
      status: 'mfa_required' as const,
      progressStep: 'waiting for the MFA code',
      progressPercent: 15,
      costCredits: 10,
      byIntegration: false,
      mfaRequestedAt: now,
      mfaExpiresAt: now + 3_600_000,
    };
    const own = randomUUID();
    jobRecords.insert(deps, {
      ...waiting,
      id: own,
      cabinetId,
      devisId: randomUUID(),
      creditsConsumed: null,
      resultTarifCents: null,
      resultSuspens: null,
      errorCode: null,
      errorMessage: null,
      errorTechnical: null,
      submitted: false,
      attempts: 1,
      leaseUntil: now + 3_600_000,
      mfaChallenge: 'Code envoyé par SMS',
      callbackWebhookId: null,
      environment: 'test',
      robotCompagnie: 'sandbox',
      artifacts: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
      enqueueNumber: 1,
      timeline: null,
    });
    // Pulled from another install of the cabinet: that install's robot waits for the code.
    jobRecords.write(
      deps.db.orm,
      cabinetId,
      randomUUID(),
      {
        compagnie: 'sandbox',
        produit: 'auto',
        dic_data: '{}',
        request_hash: 'b'.repeat(64),
        devis_id: randomUUID(),
        status: 'mfa_required',
        progress_step: 'waiting for the MFA code',
        progress_percent: 15,
        cost_credits: 10,
        submitted: false,
        attempts: 1,
        mfa_requested_at: now,
        mfa_expires_at: now + 3_600_000,
        environment: 'test',
        robot_compagnie: 'sandbox',
        created_at: now + 1,
        updated_at: now + 1,
      },
      { blob: () => undefined, now, deps },
    );
    const reported = await until(() => {
      const last = parent.received.filter((m) => m.type === 'status').at(-1);
      return last?.type === 'status' && last.status.jobs.length > 0 ? last.status : undefined;
    });
    expect(reported.jobs.map((job) => [job.job_id, job.mfa_challenge, job.mfa_kind])).toEqual([[own, 'Code envoyé par SMS', 'otp']]);
  });

  it('uses a free port when the last one is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const taken = (blocker.address() as { port: number }).port;
    const parent = fakeParentPort();
    running = await runUtilityServer({
      port: parent.port,
      env: { COURTIER_DATA_DIR: tempDir(), COURTIER_PORT: String(taken), COURTIER_LOG_LEVEL: 'silent' },
      exit: () => {},
      keyring: memoryKeyring(),
      insurers: [],
    });
    expect(running!.port).not.toBe(taken);
    blocker.close();
  });

  it('a bad configuration is reported to the main process and exits 1', async () => {
    const parent = fakeParentPort();
    const exits: number[] = [];
    const result = await runUtilityServer({
      port: parent.port,
      env: { COURTIER_DATA_DIR: tempDir(), COURTIER_PORT: 'eighty' },
      exit: (c) => exits.push(c),
      insurers: [],
    });
    expect(result).toBeNull();
    expect(exits).toEqual([1]);
    expect(parent.received).toEqual([{ type: 'fatal', message: expect.stringContaining('COURTIER_PORT') }]);
  });
});
