import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTER_API_VERSION } from '@courtier/adapter-kit';
import { initArgs, keyArgs, runCourtier, startServeProcess, stopChild } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { builtInPackage, writeAdapterPackage } from '../helpers/adapter-package.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dataDir: string;
let policyFile: string;
let work: string;
beforeEach(() => {
  const here = join(root, Math.random().toString(36).slice(2));
  dataDir = join(here, 'data');
  work = join(here, 'work');
  policyFile = join(here, 'policy.json');
  mkdirSync(work, { recursive: true });
});

const env = () => ({ COURTIER_POLICY_FILE: policyFile, COURTIER_SANDBOX: '1' });

async function courtier(args: string[]): Promise<{ code: number | null; json: Record<string, unknown>; stderr: string }> {
  const result = await runCourtier([...args, '--data-dir', dataDir, '--json'], { env: env() });
  return { code: result.code, json: JSON.parse(result.stdout || '{}') as Record<string, unknown>, stderr: result.stderr };
}

interface Listing {
  adapter_api: string;
  insurers: { code: string; version: string; api_version: string; source: string; signed: { by: string; trusted: boolean } | null }[];
  problems: string[];
}

const list = async () => (await courtier(['insurers', 'list'])).json as unknown as Listing;

function keyPair(): { privateFile: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const privateFile = join(work, `key-${Math.random().toString(36).slice(2)}.pem`);
  writeFileSync(privateFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  return { privateFile, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

const requireSigned = (trustedKeys: string[]) =>
  writeFileSync(policyFile, JSON.stringify({ adapters: { requireSigned: true, trustedKeys } }));

const horizon = builtInPackage('horizon');
const sandbox = builtInPackage('sandbox');
const tradition = builtInPackage('tradition');

describe('courtier insurers: packages', () => {
  it('lists the built-in insurers, installs a package from a folder, and removes it', async () => {
    const before = await list();
    expect(before.adapter_api).toBe(ADAPTER_API_VERSION);
    expect(before.insurers).toEqual([
      expect.objectContaining({
        code: 'horizon',
        version: horizon.version,
        api_version: horizon.apiRange,
        source: 'built-in',
        signed: null,
      }),
      expect.objectContaining({
        code: 'sandbox',
        version: sandbox.version,
        api_version: sandbox.apiRange,
        source: 'built-in',
        signed: null,
      }),
      expect.objectContaining({
        code: 'tradition',
        version: tradition.version,
        api_version: tradition.apiRange,
        source: 'built-in',
        signed: null,
      }),
    ]);

    const installed = await courtier(['insurers', 'install', writeAdapterPackage(join(work, 'acme'), { code: 'acme', version: '2.1.0' })]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.json).toMatchObject({ code: 'acme', version: '2.1.0', source: 'installed', signed: null });
    expect((await list()).insurers.map((i) => `${i.code}@${i.version}:${i.source}`)).toEqual([
      `horizon@${horizon.version}:built-in`,
      `sandbox@${sandbox.version}:built-in`,
      `tradition@${tradition.version}:built-in`,
      'acme@2.1.0:installed',
    ]);

    // An update replaces it, and its old folder goes.
    expect(
      (await courtier(['insurers', 'install', writeAdapterPackage(join(work, 'acme3'), { code: 'acme', version: '3.0.0' })])).code,
    ).toBe(0);
    expect((await list()).insurers.map((i) => `${i.code}@${i.version}`)).toEqual([
      `horizon@${horizon.version}`,
      `sandbox@${sandbox.version}`,
      `tradition@${tradition.version}`,
      'acme@3.0.0',
    ]);
    expect(readdirSync(join(dataDir, 'insurers', 'packages', 'acme'))).toEqual([expect.stringMatching(/^3\.0\.0-[0-9a-f]{12}$/)]);

    const removed = await courtier(['insurers', 'remove', 'acme']);
    expect(removed.json).toEqual({ removed: 'acme' });
    expect((await list()).insurers.map((i) => i.code)).toEqual(['horizon', 'sandbox', 'tradition']);
    expect(existsSync(join(dataDir, 'insurers', 'packages', 'acme'))).toBe(false);
    const again = await courtier(['insurers', 'remove', 'acme']);
    expect(again.code).toBe(1);
    expect(again.json.error).toBe('adapter_invalid');
    expect((await courtier(['insurers', 'remove', 'sandbox'])).json.message).toMatch(/built-in insurers cannot be removed/);
  });

  it('installs an npm-pack tarball', async () => {
    const dir = writeAdapterPackage(join(work, 'pack', 'package'), { code: 'tarred' });
    const tarball = join(work, 'tarred-1.0.0.tgz');
    execFileSync('tar', ['-czf', tarball, '-C', join(work, 'pack'), 'package']);
    expect(existsSync(dir)).toBe(true);
    const installed = await courtier(['insurers', 'install', tarball]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.json).toMatchObject({ code: 'tarred', source: 'installed' });
  });

  it('refuses a package made for another adapter API, naming both versions, and installs nothing', async () => {
    const result = await courtier([
      'insurers',
      'install',
      writeAdapterPackage(join(work, 'future'), { code: 'future', apiRange: '^2.0.0' }),
    ]);
    expect(result.code).toBe(1);
    expect(result.json.error).toBe('adapter_api_mismatch');
    expect(result.json.message).toBe(
      `courtier-insurer-future@1.0.0 targets adapter API ^2.0.0; this Courtier provides adapter API ${ADAPTER_API_VERSION}. Install a version of the adapter made for it.`,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect((await list()).insurers.map((i) => i.code)).toEqual(['horizon', 'sandbox', 'tradition']);
  });

  it('refuses a manifest that does not describe its code, an invalid manifest, and a built-in code', async () => {
    const mismatch = await courtier([
      'insurers',
      'install',
      writeAdapterPackage(join(work, 'liar'), {
        code: 'liar',
        manifest: (m) => ((m.products as { label: string }[])[0]!.label = 'Habitation'),
      }),
    ]);
    expect(mismatch.json).toMatchObject({ error: 'adapter_code_mismatch' });
    expect(mismatch.json.message).toMatch(/the label of product auto differs between its manifest and its code/);
    expect(existsSync(join(dataDir, 'insurers', 'packages', 'liar'))).toBe(false);
    expect(readdirSync(join(dataDir, 'insurers', 'packages'))).toEqual([]);

    // A manifest that says the package prices the car line, whose code maps no common risk.
    const lines = await courtier([
      'insurers',
      'install',
      writeAdapterPackage(join(work, 'lines'), { code: 'lines', manifest: (m) => (m.lines = { auto: 'auto' }) }),
    ]);
    expect(lines.json).toMatchObject({ error: 'adapter_code_mismatch' });
    expect(lines.json.message).toMatch(/its manifest prices the lines \{"auto":"auto"\}, its code \{\}/);

    const invalid = await courtier([
      'insurers',
      'install',
      writeAdapterPackage(join(work, 'bad'), { code: 'bad', manifest: (m) => (m.origins = ['https://extranet.example.fr/login']) }),
    ]);
    expect(invalid.json).toMatchObject({ error: 'adapter_invalid' });
    expect(invalid.json.message).toMatch(/courtier\.origins\.0: an origin such as/);

    const builtIn = await courtier(['insurers', 'install', writeAdapterPackage(join(work, 'sb'), { code: 'sandbox' })]);
    expect(builtIn.json).toMatchObject({ error: 'adapter_invalid' });
    expect(builtIn.json.message).toMatch(/built into Courtier/);
    expect((await list()).insurers.map((i) => i.code)).toEqual(['horizon', 'sandbox', 'tradition']);
  });

  it('signs a package; with requireSigned, refuses unsigned, tampered and untrusted packages, and says who signed', async () => {
    const { privateFile, publicPem } = keyPair();
    const other = keyPair();
    const dir = writeAdapterPackage(join(work, 'signed'), { code: 'signed' });
    const signed = await courtier(['insurers', 'sign', dir, '--key', privateFile]);
    expect(signed.code, signed.stderr).toBe(0);
    const fingerprint = String(signed.json.signed_by);
    expect(fingerprint).toMatch(/^ed25519:[0-9a-f]{32}$/);

    // Without a policy, a signed package shows its (untrusted) signer; an unsigned one installs too.
    expect((await courtier(['insurers', 'install', dir])).json).toMatchObject({ signed: { by: fingerprint, trusted: false } });

    requireSigned([publicPem]);
    expect((await courtier(['insurers', 'install', dir])).json).toMatchObject({ signed: { by: fingerprint, trusted: true } });
    const listed = await list();
    expect(listed.insurers.find((i) => i.code === 'signed')?.signed).toEqual({ by: fingerprint, trusted: true });

    const unsigned = await courtier(['insurers', 'install', writeAdapterPackage(join(work, 'plain'), { code: 'plain' })]);
    expect(unsigned.json).toMatchObject({ error: 'adapter_unsigned' });

    const tampered = writeAdapterPackage(join(work, 'tampered'), { code: 'tampered' });
    expect((await courtier(['insurers', 'sign', tampered, '--key', privateFile])).code).toBe(0);
    appendFileSync(join(tampered, 'dist', 'index.js'), '\n// one more line\n');
    expect((await courtier(['insurers', 'install', tampered])).json).toMatchObject({ error: 'adapter_signature_invalid' });
    writeFileSync(join(tampered, 'dist', 'extra.js'), 'export {};\n');
    expect((await courtier(['insurers', 'install', tampered])).json.message).toMatch(/differ from what was signed/);

    const stranger = writeAdapterPackage(join(work, 'stranger'), { code: 'stranger' });
    expect((await courtier(['insurers', 'sign', stranger, '--key', other.privateFile])).code).toBe(0);
    const untrusted = await courtier(['insurers', 'install', stranger]);
    expect(untrusted.json).toMatchObject({ error: 'adapter_signer_untrusted' });
    expect(untrusted.json.message).toMatch(/a key this machine's IT policy does not trust/);

    // An installed package changed in the data dir afterwards is not loaded.
    const [folder] = readdirSync(join(dataDir, 'insurers', 'packages', 'signed'));
    appendFileSync(join(dataDir, 'insurers', 'packages', 'signed', folder!, 'dist', 'index.js'), '\n// changed on disk\n');
    const after = await list();
    expect(after.insurers.map((i) => i.code)).toEqual(['horizon', 'sandbox', 'tradition']);
    expect(after.problems).toEqual([
      expect.stringMatching(/courtier-insurer-signed@1\.0\.0: the package's files differ from what was signed/),
    ]);
  });

  it('fails closed: an adapters policy that does not parse, or a policy file that cannot be read, still requires signatures', async () => {
    writeFileSync(policyFile, JSON.stringify({ adapters: { requireSigned: 'yes' } }));
    expect((await courtier(['insurers', 'install', writeAdapterPackage(join(work, 'a'), { code: 'a-one' })])).json).toMatchObject({
      error: 'adapter_unsigned',
    });
    writeFileSync(policyFile, '{ not json');
    expect((await courtier(['insurers', 'install', writeAdapterPackage(join(work, 'b'), { code: 'b-two' })])).json).toMatchObject({
      error: 'adapter_unsigned',
    });
  });

  it('a running service picks up an install, a removal and a reload without a restart', async () => {
    const cabinet = String((await courtier(initArgs('Loader', 'loader@example.fr'))).json.cabinet_id);
    const key = String((await courtier(keyArgs(cabinet, 'automation:read,automation:enqueue'))).json.key);
    expect((await courtier(['credits', 'grant', '--cabinet', cabinet, '--amount', '100'])).code).toBe(0);
    const serve = await startServeProcess(['--data-dir', dataDir], { ...env(), COURTIER_LOG_LEVEL: 'info' });
    try {
      const insurersOf = async (produit: string) => {
        const response = await fetch(`${serve.url}/api/v1/public/produits-disponibles`, { headers: { 'X-API-Key': key } });
        const body = (await response.json()) as { data: { code: string; insurers: { code: string }[] }[] };
        return body.data.find((p) => p.code === produit)?.insurers.map((i) => i.code) ?? [];
      };
      expect(await insurersOf('auto')).toEqual(['sandbox']);

      expect((await courtier(['insurers', 'install', writeAdapterPackage(join(work, 'live'), { code: 'live', tarif: 654.3 })])).code).toBe(
        0,
      );
      await expect.poll(() => insurersOf('auto'), { timeout: 5_000 }).toEqual(['sandbox', 'live']);

      // It prices: the cabinet's credentials for it, a job through the REST API, run by its code.
      const setCredentials = (extra: string) =>
        runCourtier(
          [
            ...['insurers', 'set-credentials', '--cabinet', cabinet, '--compagnie', 'live', '--login', 'l', '--password-stdin'],
            ...['--extra', extra, '--data-dir', dataDir, '--json'],
          ],
          { env: env(), input: 'p\n' },
        );
      const unknownField = await setCredentials('broker_code=B42,agency=7');
      expect(JSON.parse(unknownField.stdout)).toMatchObject({
        error: 'validation_error',
        message: 'live Assurances has no credential field agency; its extra fields are broker_code (Code courtier), pin (Code PIN).',
      });
      const credentials = await setCredentials('broker_code=B42,pin=PIN-7319-secret');
      expect(credentials.code, credentials.stderr).toBe(0);
      const enqueued = await fetch(`${serve.url}/api/v1/public/automation/tarifications`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Idempotency-Key': 'live-1' },
        body: JSON.stringify({ compagnie: 'live', produit: 'auto', dicData: { ref: 'A-1' } }),
      });
      expect(enqueued.status).toBe(202);
      const { job_id } = (await enqueued.json()) as { job_id: string };
      const job = async () =>
        (await (await fetch(`${serve.url}/api/v1/public/automation/jobs/${job_id}`, { headers: { 'X-API-Key': key } })).json()) as {
          status: string;
          result?: { tarif_eur?: number };
        };
      await expect.poll(async () => (await job()).status, { timeout: 10_000 }).toBe('partial');
      expect((await job()).result?.tarif_eur).toBe(654.3);
      // The secret field is kept like the password: not in the database.
      for (const file of readdirSync(dataDir).filter((f) => f.startsWith('courtier.sqlite'))) {
        expect(readFileSync(join(dataDir, file)).includes('PIN-7319-secret'), file).toBe(false);
      }

      // The IT policy now requires signatures: a reload drops the unsigned package.
      requireSigned([]);
      expect((await courtier(['insurers', 'reload'])).json).toEqual({ reload_requested: true });
      await expect.poll(() => insurersOf('auto'), { timeout: 5_000 }).toEqual(['sandbox']);
      // The log line travels through a pipe: it may come a moment after the service answers.
      await expect.poll(() => serve.output(), { timeout: 5_000 }).toMatch(/courtier-insurer-live@1\.0\.0 is not signed/);

      rmSync(policyFile);
      expect((await courtier(['insurers', 'reload'])).code).toBe(0);
      await expect.poll(() => insurersOf('auto'), { timeout: 5_000 }).toEqual(['sandbox', 'live']);
      expect((await courtier(['insurers', 'remove', 'live'])).code).toBe(0);
      await expect.poll(() => insurersOf('auto'), { timeout: 5_000 }).toEqual(['sandbox']);
    } finally {
      await stopChild(serve.child);
    }
  });
});
