import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobSchema, type Job } from '../../shared/automation.js';
import { isValidSiret } from '../../shared/crm.js';
import { eventEnvelopeSchema } from '../../shared/events.js';
import { MCP_SCOPES } from '../../shared/oauth.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { createAccessTokenForUser } from '../../server/oauth/token.js';
import { RobotError } from '@courtier/adapter-kit';
import { initCabinet, setLlmDataSharing } from '../../server/tenancy/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, TEST_PDF, type TestInsurer } from '../helpers/test-insurer.js';

/**
 * The test insurer with a product whose dicData holds what real insurers ask for: a postcode, a
 * licence plate, a policy number, a driver's name and birth date (all strings), and a number.
 */
function insurerWithPersonalForm(): TestInsurer {
  const schema = z.object({
    postcode: z.string().min(1),
    registration: z.string().min(1),
    policy_number: z.string().min(1),
    driver_name: z.string().min(1),
    driver_birth_date: z.iso.date(),
    vehicle_value_eur: z.number(),
  });
  const example = {
    postcode: '69003',
    registration: 'AA-001-AA',
    policy_number: 'POL-1',
    driver_name: 'Exemple',
    driver_birth_date: '1980-01-01',
    vehicle_value_eur: 9000,
  };
  return {
    ...createTestInsurer('privco', 'Privé Assurances'),
    products: [{ code: 'auto', label: 'Assurance auto', kind: 'quote', schema, example }],
  };
}

const clock = testClock();
let server: TestServer;
let receiver: Receiver;
let insurer: TestInsurer;

beforeAll(async () => {
  receiver = await startReceiver();
  insurer = insurerWithPersonalForm();
  server = await startTestServer({
    clock,
    insurers: [insurer],
    config: { webhookAllowPrivateTargets: true, tarificationQuotaPerHour: 10_000 },
    webhooks: { extraCa: [receiver.ca] },
  });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

// ---- Generated personal values: distinctive, so that finding one (or its tail) anywhere means it leaked ----

const random = fc.stringMatching(/^[A-Za-z0-9]{8}$/);
const token = (prefix: string) => random.map((r) => `${prefix}${r}`);
const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));
const phone = fc.tuple(digits(2), digits(2), digits(2), digits(2)).map((pairs) => `06 ${pairs.join(' ')}`);
/** 1930–1999: a tail such as 957-03-14 can never be part of the 2026 timestamps around it. */
const birthDate = fc
  .tuple(fc.integer({ min: 1930, max: 1999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }))
  .map(([y, m, d]) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
/** A SIRET with a valid Luhn key: 13 random digits and the key digit that makes the sum a multiple of 10. */
const siret = digits(13)
  .filter((body) => !body.startsWith('356000000'))
  .map((body) => {
    for (let key = 0; key < 10; key++) if (isValidSiret(`${body}${key}`)) return `${body}${key}`;
    throw new Error('no Luhn key');
  });

const personalValues = fc.record({
  client: fc.record({
    last_name: token('Nom'),
    first_name: token('Prenom'),
    email: random.map((r) => `client.${r}@exemple.fr`),
    phone,
    birth_date: birthDate,
    siret,
    address: fc.record({
      line1: token('Rue'),
      line2: token('Batiment'),
      postcode: random.map((r) => `P${r.slice(0, 7)}`),
      city: token('Ville'),
    }),
  }),
  /** What a PATCH /clients/{id} and the update_client tool change. */
  update: fc.record({ last_name: token('Nouveau'), email: random.map((r) => `maj.${r}@exemple.fr`), phone }),
  contact: fc.record({
    last_name: token('Contact'),
    first_name: token('Prenom'),
    email: random.map((r) => `contact.${r}@exemple.fr`),
    phone,
    siret,
  }),
  dicData: fc.record({
    postcode: token('CP'),
    registration: token('Immat'),
    policy_number: token('Police'),
    driver_name: token('Conducteur'),
    driver_birth_date: birthDate,
  }),
  robot: fc.record({ suspens: token('Suspens'), error: token('Erreur'), challenge: token('Code envoye au ') }),
});
type PersonalValues = typeof personalValues extends fc.Arbitrary<infer V> ? V : never;

/** Every generated string, flattened. */
function leaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(leaves);
  return [];
}

// ---- One cabinet through every flow that sends data out ----

interface Outgoing {
  webhookBodies: string[];
  mcpResults: string[];
}

async function untilStatus(api: ReturnType<typeof apiClient>, jobId: string, status: Job['status']): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await api.get(`/automation/jobs/${jobId}`)).body.status === status) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`job ${jobId} never reached ${status}`);
}

/** Drives REST, the robots (complete, fail, MFA), webhooks and MCP for one cabinet; returns what left the service. */
async function everythingThatLeaves(values: PersonalValues, sharing: boolean): Promise<Outgoing> {
  const { cabinet_id: cabinetId, user_id: userId } = await initCabinet(server.deps, {
    cabinet: 'Cabinet Privé',
    email: `admin-${randomUUID()}@example.fr`,
    password: 'correct horse battery',
  });
  setLlmDataSharing(server.deps, cabinetId, sharing);
  grantCredits(server.deps, cabinetId, 1000);
  setInsurerCredentials(server.deps, cabinetId, 'privco', { login: 'broker', password: 's3cret!' });
  const api = apiClient(server, server.createKey(cabinetId).key);
  const created = async (path: string, body: unknown) => {
    const res = await api.post(path, body);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return String(res.body.id ?? res.body.job_id);
  };
  expect((await api.post('/webhooks', { url: receiver.url, events: ['*'] })).status).toBe(201);

  // REST, as an integrator: a client, an opportunity through its stages, a draft quote.
  const clientId = await created('/clients', values.client);
  expect((await api.patch(`/clients/${clientId}`, values.update)).status).toBe(200);
  const erasedId = await created('/clients', { last_name: 'Effacé' });
  expect((await api.call('DELETE', `/clients/${erasedId}`)).status).toBe(204);
  const opportunityId = await created('/opportunities', { title: 'Flotte auto', product: 'auto', contact: values.contact });
  await api.patch(`/opportunities/${opportunityId}`, { stage: 'won' });
  const draftId = await created('/devis', { client_id: clientId, compagnie: 'privco', produit: 'auto', dicData: values.dicData });

  // Robots: one prices with a suspens, one is refused with a message, one asks for a code.
  const dicData = (vehicle: number) => ({ ...values.dicData, vehicle_value_eur: vehicle });
  insurer.queue(
    async () => ({ tarif_eur: 321.4, suspens: values.robot.suspens, pdf: TEST_PDF, outcome: 'complete' }),
    async () => {
      throw new RobotError('business', 'risk_declined', values.robot.error);
    },
    async (ctx) => ({ tarif_eur: Number(await ctx.requestMfa(values.robot.challenge)), pdf: TEST_PDF, outcome: 'complete' }),
  );
  const pricedJob = await created('/automation/tarifications', {
    compagnie: 'privco',
    produit: 'auto',
    dicData: dicData(1000),
    devis_id: draftId,
  });
  const failedJob = await created('/automation/tarifications', {
    compagnie: 'privco',
    produit: 'auto',
    dicData: dicData(2000),
    client_id: clientId,
  });
  await server.app.robotWorker.idle();
  const mfaJob = await created('/automation/tarifications', { compagnie: 'privco', produit: 'auto', dicData: dicData(3000) });
  await untilStatus(api, mfaJob, 'mfa_required');

  // MCP, as an assistant: every tool that reads or writes what the cabinet holds.
  const token = createAccessTokenForUser(server.deps, { cabinetId, userId, clientName: 'Assistant', scopes: MCP_SCOPES }).access_token;
  const mcp = new McpClient({ name: 'privacy-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  const mcpResults: string[] = [];
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await mcp.callTool({ name, arguments: args });
    mcpResults.push(JSON.stringify(result.content), JSON.stringify(result.structuredContent ?? null));
    return result.structuredContent as Record<string, unknown>;
  };
  try {
    await call('whoami');
    await call('list_products');
    await call('get_product_schema', { produit: 'auto', compagnie: 'privco' });
    await call('list_clients');
    const mcpClient = await call('create_client', values.client);
    await call('update_client', { client_id: mcpClient.id, ...values.update });
    await call('erase_client', { client_id: mcpClient.id });
    await call('list_opportunities');
    await call('get_opportunity', { opportunity_id: opportunityId });
    const mcpOpportunity = await call('create_opportunity', { title: 'Via MCP', product: 'auto', contact: values.contact });
    await call('update_opportunity_stage', { opportunity_id: mcpOpportunity.id, stage: 'qualified' });
    await call('create_devis', { client_id: clientId, compagnie: 'privco', produit: 'auto', dicData: values.dicData });
    await call('price_quote', { compagnie: 'privco', produit: 'auto', dicData: dicData(4000), dry_run: true });
    for (const jobId of [pricedJob, failedJob, mfaJob]) {
      const job = jobSchema.parse(await call('get_job', { job_id: jobId }));
      await call('get_devis', { devis_id: job.devis_id });
    }
    await call('get_devis_pdf_link', { devis_id: draftId });
    await call('cancel_job', { job_id: mfaJob });
  } finally {
    await mcp.close();
  }
  await server.app.robotWorker.idle();

  await server.app.webhookDispatcher.drain();
  const webhookBodies = receiver.received
    .map((r) => r.rawBody)
    .filter((body) => eventEnvelopeSchema.parse(JSON.parse(body)).cabinet_id === cabinetId);
  // What was sent: every kind of event the flows above emit, so the assertions below are not vacuous.
  const types = new Set(webhookBodies.map((body) => eventEnvelopeSchema.parse(JSON.parse(body)).type));
  expect([...types].sort()).toEqual(
    [
      'client.erased',
      'client.updated',
      'devis.failed',
      'devis.generated',
      'job.completed',
      'job.failed',
      'job.mfa_required',
      'opportunity.created',
      'opportunity.stage_changed',
      'opportunity.won',
    ].sort(),
  );
  return { webhookBodies, mcpResults };
}

describe('CWE-359 Exposure of private personal information: personal data is masked wherever LLM data sharing is off', () => {
  it('no generated personal value, nor its tail, appears in any webhook body or MCP result with sharing off; all appear with it on (property)', async () => {
    await fc.assert(
      fc.asyncProperty(personalValues, async (values) => {
        const secrets = leaves(values);
        const off = await everythingThatLeaves(values, false);
        for (const [where, bodies] of [
          ['webhook body', off.webhookBodies],
          ['MCP result', off.mcpResults],
        ] as const) {
          for (const body of bodies) {
            for (const secret of secrets) {
              expect(body, `${where} leaks ${secret}`).not.toContain(secret);
              expect(body, `${where} leaks the tail of ${secret}`).not.toContain(secret.slice(1));
            }
          }
        }
        const on = await everythingThatLeaves(values, true);
        const shared = [...on.webhookBodies, ...on.mcpResults].join('\n');
        for (const secret of secrets) expect(shared, `${secret} is shared when sharing is on`).toContain(secret);
      }),
      { numRuns: 24, endOnFailure: true },
    );
  });

  it('get_devis_pdf_link withholds the bearer link while sharing is off, and says where a person gets the PDF', async () => {
    const values = fc.sample(personalValues, { numRuns: 1, seed: 42 })[0];
    if (!values) throw new Error('no sample');
    const { cabinet_id: cabinetId, user_id: userId } = await initCabinet(server.deps, {
      cabinet: 'Cabinet PDF',
      email: `admin-${randomUUID()}@example.fr`,
      password: 'correct horse battery',
    });
    grantCredits(server.deps, cabinetId, 100);
    setInsurerCredentials(server.deps, cabinetId, 'privco', { login: 'broker', password: 's3cret!' });
    const api = apiClient(server, server.createKey(cabinetId).key);
    insurer.queue(async () => ({ tarif_eur: 100, pdf: TEST_PDF, outcome: 'complete' }));
    const enqueued = await api.post('/automation/tarifications', {
      compagnie: 'privco',
      produit: 'auto',
      dicData: { ...values.dicData, vehicle_value_eur: 1 },
    });
    const jobId = String(enqueued.body.job_id);
    await server.app.robotWorker.idle();
    const devisId = String((await api.get(`/automation/jobs/${jobId}`)).body.devis_id);

    const token = createAccessTokenForUser(server.deps, { cabinetId, userId, clientName: 'Assistant', scopes: MCP_SCOPES }).access_token;
    const mcp = new McpClient({ name: 'privacy-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    try {
      const refused = await mcp.callTool({ name: 'get_devis_pdf_link', arguments: { devis_id: devisId } });
      expect(refused.isError).toBe(true);
      // An error's body is its text content: errors carry no structuredContent (it would have to match the output schema).
      expect(refused.structuredContent).toBeUndefined();
      const body = JSON.parse((refused.content as { text: string }[])[0]?.text ?? 'null') as Record<string, unknown>;
      const consoleUrl = `${server.url}/console/jobs?job=${jobId}`;
      expect(body).toMatchObject({ error: 'llm_data_sharing_off', details: { devis_id: devisId, console_url: consoleUrl } });
      const message = String(body.message);
      expect(message).toContain('personal data');
      expect(message).toContain(consoleUrl);
      expect(message).toContain('Settings');
      expect(JSON.stringify(refused)).not.toContain('/files/devis/');

      setLlmDataSharing(server.deps, cabinetId, true);
      const link = await mcp.callTool({ name: 'get_devis_pdf_link', arguments: { devis_id: devisId } });
      expect(link.isError).not.toBe(true);
      const url = String((link.structuredContent as { url: string }).url);
      expect(url.startsWith(`${server.url}/api/v1/public/files/devis/${devisId}.pdf?`)).toBe(true);
      expect((await fetch(url)).status).toBe(200);
    } finally {
      await mcp.close();
    }
  });
});
