/**
 * Idempotency keys bound to the caller and committed with the resource they describe.
 * Real HTTP, a real SQLite file; the crash test kills a real `courtier serve` process.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueuedSchema } from '../../shared/automation.js';
import { walletSchema } from '../../shared/wallet.js';
import { opportunitySchema } from '../../shared/crm.js';
import { REPLAYED_SECRET_WARNING } from '../../shared/endpoint.js';
import { createdWebhookReplaySchema, createdWebhookSchema, rotatedSecretReplaySchema, rotatedSecretSchema } from '../../shared/webhooks.js';
import { apiClient } from '../helpers/api.js';
import { CLI_WITH_TEST_INSURERS, initArgs, jsonCli, keyArgs, startServeProcess } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { createTestInsurer } from '../helpers/test-insurer.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { createIdempotency } from '../../server/idempotency/service.js';
import { createAccessTokenForUser } from '../../server/oauth/token.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { startTestServer, tempDir, testClock, type TestServer } from '../helpers/server.js';

const clock = testClock();
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({
    clock,
    insurers: [createTestInsurer()],
    config: { webhookAllowPrivateTargets: true },
    webhooks: { extraCa: [receiver.ca] },
  });
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

function opportunity(title: string) {
  return { title, product: 'auto', contact: { last_name: 'Martin' } };
}

describe('CWE-639 (authorization through a user-controlled key): an Idempotency-Key is scoped to the API key that sent it', () => {
  it("another key of the same cabinet, with the same Idempotency-Key and body, gets its own result, never the first key's", async () => {
    const cabinet = await server.createCabinet();
    const testKey = apiClient(server, server.createKey(cabinet, { environment: 'test' }).key);
    const prodKey = apiClient(server, server.createKey(cabinet, { environment: 'prod' }).key);
    const key = randomUUID();

    const fromTest = await testKey.post('/opportunities', opportunity('scoped'), { 'Idempotency-Key': key });
    expect(fromTest.status).toBe(201);
    const fromProd = await prodKey.post('/opportunities', opportunity('scoped'), { 'Idempotency-Key': key });
    expect(fromProd.status).toBe(201);
    expect(fromProd.headers.get('idempotent-replayed')).toBeNull();
    expect(opportunitySchema.parse(fromProd.body).id).not.toBe(opportunitySchema.parse(fromTest.body).id);

    // Each key still replays its own.
    const replay = await testKey.post('/opportunities', opportunity('scoped'), { 'Idempotency-Key': key });
    expect(replay.status).toBe(200);
    expect(opportunitySchema.parse(replay.body).id).toBe(opportunitySchema.parse(fromTest.body).id);
  });

  it('a webhook created by one key is not replayed, secret and all, to another key that reuses its Idempotency-Key', async () => {
    const cabinet = await server.createCabinet();
    const first = apiClient(server, server.createKey(cabinet, { scopes: ['webhooks:manage'] }).key);
    const second = apiClient(server, server.createKey(cabinet, { scopes: ['webhooks:manage'] }).key);
    const key = randomUUID();
    const body = { url: receiver.url, events: ['opportunity.created'] };

    const created = createdWebhookSchema.parse((await first.post('/webhooks', body, { 'Idempotency-Key': key })).body);
    const other = await second.post('/webhooks', body, { 'Idempotency-Key': key });
    expect(other.status).toBe(201);
    const otherHook = createdWebhookSchema.parse(other.body);
    expect(otherHook.id).not.toBe(created.id);
    expect(JSON.stringify(other.body)).not.toContain(created.secret);
  });
});

describe('CWE-639: an MCP idempotency_key is scoped to the grant (the consent) that sent it', () => {
  /** tools/call over real HTTP with a bearer access token; the tool's structured result. */
  interface ToolResult {
    isError?: boolean;
    structuredContent: Record<string, unknown>;
    content: { type: string; text: string }[];
  }
  /** An isError result's body (the REST error body) is its text: errors carry no structuredContent. */
  const errorOf = (result: ToolResult) => JSON.parse(result.content[0]?.text ?? 'null') as unknown;

  async function callTool(token: string, name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const res = await server.request('/mcp', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { result: ToolResult }).result;
  }

  it('a retried price_quote with the same key returns the same job and debits once; another grant with the key prices on its own', async () => {
    const cabinet = await server.createCabinet();
    grantCredits(server.deps, cabinet, 100);
    setInsurerCredentials(server.deps, cabinet, 'testco', { login: 'broker', password: 'pw' });
    const user = server.deps.db.sqlite.prepare('SELECT id FROM users WHERE cabinet_id = ?').get(cabinet) as { id: string };
    const token = (clientName: string) =>
      createAccessTokenForUser(server.deps, {
        cabinetId: cabinet,
        userId: user.id,
        clientName,
        scopes: ['automation:enqueue', 'automation:read'],
      }).access_token;
    const first = token('Assistant A');
    const other = token('Assistant B');
    const key = randomUUID();
    const args = { compagnie: 'testco', produit: 'auto', dicData: { postcode: '75011', birth_date: '1984-03-09', formula: 'tiers' } };

    const priced = await callTool(first, 'price_quote', { ...args, idempotency_key: key });
    expect(priced.isError).toBeUndefined();
    const again = await callTool(first, 'price_quote', { ...args, idempotency_key: key });
    expect(again.structuredContent.job_id).toBe(priced.structuredContent.job_id);
    const reused = await callTool(first, 'price_quote', {
      ...args,
      dicData: { ...args.dicData, formula: 'tous_risques' },
      idempotency_key: key,
    });
    expect(reused).toMatchObject({ isError: true });
    expect(errorOf(reused)).toMatchObject({ error: 'idempotency_key_reused' });
    expect(creditBalance(server.deps, cabinet)).toBe(90);

    // The other assistant's call with the same key is its own: here the replay guard (the same request
    // within 10 minutes) answers, not the first assistant's job.
    const fromOther = await callTool(other, 'price_quote', { ...args, idempotency_key: key });
    expect(fromOther).toMatchObject({ isError: true });
    expect(errorOf(fromOther)).toMatchObject({ error: 'rpa_replay_detected' });
    expect(creditBalance(server.deps, cabinet)).toBe(90);
  });
});

describe('CWE-312 (cleartext storage of sensitive information): stored responses never hold a webhook secret', () => {
  /** Every byte SQLite wrote for this server: the database, its WAL and shared memory. */
  function databaseBytes(): Buffer {
    server.deps.db.sqlite.pragma('wal_checkpoint(PASSIVE)');
    return Buffer.concat(
      readdirSync(server.dataDir)
        .filter((name) => name.startsWith('courtier.sqlite'))
        .map((name) => readFileSync(join(server.dataDir, name))),
    );
  }

  it('a replayed creation answers secret null and says it was shown once; the secret is nowhere in the database files', async () => {
    const cabinet = await server.createCabinet();
    const api = apiClient(server, server.createKey(cabinet, { scopes: ['webhooks:manage'] }).key);
    const key = randomUUID();
    const body = { url: receiver.url, events: ['opportunity.created'] };

    const first = await api.post('/webhooks', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    const created = createdWebhookSchema.parse(first.body);
    expect(created.secret).toMatch(/^whsec_/);

    const replay = await api.post('/webhooks', body, { 'Idempotency-Key': key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const replayed = createdWebhookReplaySchema.parse(replay.body);
    expect(replayed).toMatchObject({ id: created.id, secret: null, _warning: REPLAYED_SECRET_WARNING });

    const key2 = randomUUID();
    const rotated = rotatedSecretSchema.parse(
      (await api.post(`/webhooks/${created.id}/rotate-secret`, { overlap_seconds: 60 }, { 'Idempotency-Key': key2 })).body,
    );
    const rotatedAgain = await api.post(`/webhooks/${created.id}/rotate-secret`, { overlap_seconds: 60 }, { 'Idempotency-Key': key2 });
    expect(rotatedAgain.status).toBe(200);
    expect(rotatedSecretReplaySchema.parse(rotatedAgain.body)).toMatchObject({ id: created.id, secret: null });

    const bytes = databaseBytes();
    for (const secret of [created.secret, rotated.secret]) {
      expect(bytes.includes(Buffer.from(secret)), 'a secret in the database files').toBe(false);
      expect(bytes.includes(Buffer.from(secret.slice('whsec_'.length))), 'a secret in the database files').toBe(false);
    }
  });
});

describe('CWE-362 (race condition): a request in flight keeps its key, however long it runs', () => {
  it('a webhook test waiting for its receiver: duplicates get 409 even after the clock jumps 10 minutes; then one delivery, replayed', async () => {
    const cabinet = await server.createCabinet();
    const api = apiClient(server, server.createKey(cabinet, { scopes: ['webhooks:manage'] }).key);
    const hook = createdWebhookSchema.parse((await api.post('/webhooks', { url: receiver.url, events: ['opportunity.created'] })).body);
    const key = randomUUID();
    const before = receiver.received.length;
    receiver.hang(true);
    const first = api.post(`/webhooks/${hook.id}/test`, undefined, { 'Idempotency-Key': key });
    await receiver.waitFor(before + 1);

    expect((await api.post(`/webhooks/${hook.id}/test`, undefined, { 'Idempotency-Key': key })).body).toMatchObject({
      error: 'idempotency_conflict',
    });
    // The previous code took a claim over after 60 s, while its request still ran.
    clock.advance(10 * 60_000);
    expect((await api.post(`/webhooks/${hook.id}/test`, undefined, { 'Idempotency-Key': key })).body).toMatchObject({
      error: 'idempotency_conflict',
    });

    receiver.hang(false);
    const done = await first;
    expect(done.status).toBe(200);
    const replay = await api.post(`/webhooks/${hook.id}/test`, undefined, { 'Idempotency-Key': key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(done.body);
    expect(receiver.received.length).toBe(before + 1);
  });
});

describe('CWE-362 (race condition): another process’s claim is renewed while its request runs, and taken over only once it stops', () => {
  it('two server processes on one database: B never takes A’s live claim, however long A runs; once A answers, B replays', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const dir = tempDir();
    const db = openDatabase(databaseFile(dir));
    try {
      const processClock = testClock();
      const processA = createIdempotency({ db, clock: processClock }, 'process-a');
      const processB = createIdempotency({ db, clock: processClock }, 'process-b');
      const request = {
        id: { cabinetId: 'cabinet', caller: 'key:k', endpoint: 'POST /api/v1/public/webhooks/:id/test', key: 'k1' },
        requestHash: 'h',
      };
      const response = { statusCode: 200, body: '{"succeeded":true}', headers: {} };
      let answer: () => void = () => undefined;
      const running = processA.onceAsync(request, () => new Promise((resolve) => (answer = () => resolve({ response, stored: response }))));
      const fromB = () => processB.once(request, () => ({ response: { ...response, body: '{"second":true}' }, stored: response }));
      // Ten minutes of A's request, its heartbeat renewing the claim every 20 s.
      for (let second = 20; second <= 600; second += 20) {
        processClock.advance(20_000);
        vi.advanceTimersByTime(20_000);
        expect(fromB, `after ${second} s`).toThrow(/still in progress/);
      }
      answer();
      expect(await running).toEqual({ kind: 'fresh', response });
      expect(fromB()).toEqual({ kind: 'replay', response });
    } finally {
      vi.useRealTimers();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('CWE-362 (race between a commit and its response): a crash between the two never creates twice', () => {
  const dataDir = tempDir();
  const env = { COURTIER_DATA_DIR: dataDir };
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const cli = jsonCli(env);

  /** POSTs with the crash header: the server dies (kill -9) after its handler, before answering. */
  async function postAndCrash(child: { child: ChildProcess; url: string }, path: string, headers: Record<string, string>, body: unknown) {
    const exited = once(child.child, 'exit');
    await expect(
      fetch(`${child.url}/api/v1/public${path}`, {
        method: 'POST',
        headers: { ...headers, 'X-Test-Crash': 'after-commit' },
        body: JSON.stringify(body),
      }),
    ).rejects.toThrow();
    const [code, signal] = (await exited) as [number | null, string | null];
    expect(signal ?? code).toBe('SIGKILL');
  }

  it('kill -9 after the commit of a creation and of an enqueue: the retry replays; one opportunity, one job, one debit', async () => {
    const { cabinet_id: cabinet } = (await cli(initArgs('Crash', 'crash@example.fr'))) as { cabinet_id: string };
    const { key } = (await cli(keyArgs(cabinet, 'crm:write,crm:read,automation:enqueue,automation:read'))) as { key: string };
    await cli(['credits', 'grant', '--cabinet', cabinet, '--amount', '100']);
    await cli(
      ['insurers', 'set-credentials', '--cabinet', cabinet, '--compagnie', 'crash-before', '--login', 'broker', '--password-stdin'],
      'pw\n',
    );
    const headers = { 'X-API-Key': key, 'Content-Type': 'application/json' };
    const opportunityKey = randomUUID();
    const enqueueKey = randomUUID();
    const tarification = { compagnie: 'crash-before', produit: 'auto', dicData: { ref: 'crash' } };

    await postAndCrash(
      await startServeProcess([], env, CLI_WITH_TEST_INSURERS),
      '/opportunities',
      { ...headers, 'Idempotency-Key': opportunityKey },
      opportunity('crash'),
    );
    await postAndCrash(
      await startServeProcess([], env, CLI_WITH_TEST_INSURERS),
      '/automation/tarifications',
      { ...headers, 'Idempotency-Key': enqueueKey },
      tarification,
    );

    const second = await startServeProcess([], env, CLI_WITH_TEST_INSURERS);
    try {
      const post = (path: string, idempotencyKey: string, body: unknown) =>
        fetch(`${second.url}/api/v1/public${path}`, {
          method: 'POST',
          headers: { ...headers, 'Idempotency-Key': idempotencyKey },
          body: JSON.stringify(body),
        });
      const retried = await post('/opportunities', opportunityKey, opportunity('crash'));
      expect(retried.status).toBe(200);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      const replayed = opportunitySchema.parse(await retried.json());
      const list = (await (await fetch(`${second.url}/api/v1/public/opportunities`, { headers })).json()) as { data: { id: string }[] };
      expect(list.data.map((o) => o.id)).toEqual([replayed.id]);

      const retriedJob = await post('/automation/tarifications', enqueueKey, tarification);
      expect(retriedJob.status).toBe(200);
      expect(retriedJob.headers.get('idempotent-replayed')).toBe('true');
      const job = enqueuedSchema.parse(await retriedJob.json());
      const jobs = (await (await fetch(`${second.url}/api/v1/public/automation/jobs`, { headers })).json()) as {
        data: { job_id: string }[];
      };
      expect(jobs.data.map((j) => j.job_id)).toEqual([job.job_id]);
      const wallet = walletSchema.parse(await (await fetch(`${second.url}/api/v1/public/wallet`, { headers })).json());
      expect(wallet.ledger.filter((e) => e.kind === 'debit')).toHaveLength(1);
    } finally {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    }
  });
});
