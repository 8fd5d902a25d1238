// @module-tag browser
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readAdapterPackage } from '../../server/insurers/package-loader.js';
import { packageRoot } from '../../server/paths.js';
import { runCourtier, startServeProcess, stopChild } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { SANDBOX_PRODUCTS } from '../../insurers/sandbox/src/products.js';

const dataDir = tempDir();
// Copies of the sandbox package live inside the repository, where their import of the kit resolves.
const copies = join(packageRoot(), 'test-artifacts', `cassettes-${process.pid}`);
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(copies, { recursive: true, force: true });
});

interface Tested {
  passed: boolean;
  cassettes: { cassette: string; produit: string; line?: string; ok: boolean; problems: string[] }[];
}

async function test(target: string): Promise<{ code: number | null; tested: Tested }> {
  const run = await runCourtier(['insurers', 'test', target, '--data-dir', dataDir, '--json']);
  return { code: run.code, tested: JSON.parse(run.stdout || '{}') as Tested };
}

/** A copy of the built-in sandbox package, its cassettes changed by `change`. */
function sandboxCopy(name: string, change: (cassette: Record<string, unknown>) => void): string {
  const dir = join(copies, name);
  mkdirSync(dir, { recursive: true });
  for (const part of ['package.json', 'dist', 'cassettes'])
    cpSync(join(packageRoot(), 'insurers', 'sandbox', part), join(dir, part), { recursive: true });
  const file = join(dir, 'cassettes', 'auto.json');
  const cassette = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  change(cassette);
  writeFileSync(file, JSON.stringify(cassette));
  return dir;
}

describe('cassettes: courtier insurers record and test', () => {
  it('replays every built-in insurer’s cassettes offline, one per quote product: no portal runs, every product priced as recorded', async () => {
    const root = join(packageRoot(), 'insurers');
    const builtIn = readdirSync(root).filter((name) => existsSync(join(root, name, 'cassettes')));
    expect(builtIn).toEqual(expect.arrayContaining(['horizon', 'sandbox', 'tradition']));
    for (const name of builtIn) {
      const quotes = readAdapterPackage(join(root, name)).courtier.products.filter((p) => p.kind === 'quote');
      const { code, tested } = await test(name);
      expect(code, `${name}: ${JSON.stringify(tested)}`).toBe(0);
      const recorded = tested.cassettes.filter((c) => c.line === undefined);
      expect(recorded.map((c) => [c.cassette, c.ok])).toEqual(quotes.map((p) => [`cassettes/${p.code}.json`, true]).sort());
      // Each line priced from the common risk: its product's cassette, replayed with the line's example as the adapter maps it.
      const lines = Object.entries(readAdapterPackage(join(root, name)).courtier.lines);
      expect(tested.cassettes.filter((c) => c.line !== undefined).map((c) => [c.line, c.cassette, c.ok])).toEqual(
        lines.map(([line, produit]) => [line, `cassettes/${produit}.json`, true]),
      );
    }
  });

  it('fails a replay whose portal answers a premium other than the recorded result, and one that asks for what the cassette lacks', async () => {
    const premium = sandboxCopy('premium', (cassette) => {
      const exchanges = cassette.exchanges as { path: string; body: { text: string } }[];
      const result = exchanges.find((e) => /\/devis\/[0-9a-f]{16}$/.test(e.path))!;
      result.body.text = result.body.text.replace('705,76', '805,76');
    });
    const changed = await test(premium);
    expect(changed.code).toBe(1);
    expect(changed.tested.cassettes[0]).toMatchObject({ ok: false, problems: ['premium 805.76 € instead of 705.76 €'] });

    const missing = sandboxCopy('missing', (cassette) => {
      cassette.exchanges = (cassette.exchanges as { path: string }[]).filter((e) => !e.path.endsWith('/pdf'));
    });
    const lacking = await test(missing);
    expect(lacking.code).toBe(1);
    expect(lacking.tested.cassettes[0]?.problems.join(' ')).toMatch(
      /requests the cassette does not hold: GET http:\/\/127\.0\.0\.1:\d+\/sandbox\/insurer\/devis\/[0-9a-f]+\/pdf/,
    );
  });

  it('fails a replay whose step finds a page other than the recorded one, naming the step and what differs', async () => {
    // The portal's answer drifted from the recording: a help link appeared on the login page (the
    // robot still gets through), and the recording's vehicle step showed a field that is gone.
    const drifted = sandboxCopy('drifted', (cassette) => {
      const exchanges = cassette.exchanges as { method: string; path: string; body: { text: string } }[];
      const login = exchanges.find((e) => e.method === 'GET' && e.path.endsWith('/login') && e.body.text.includes('<form'))!;
      login.body.text = login.body.text.replace('</form>', '</form><p><a href="/aide">Aide en ligne</a></p>');
      const steps = cassette.steps as { step: string; landmarks: string[] }[];
      steps.find((s) => s.step === 'vehicle')!.landmarks.push('textbox "Numéro de série"');
    });
    const replayed = await test(drifted);
    expect(replayed.code).toBe(1);
    expect(replayed.tested.cassettes[0]).toMatchObject({
      ok: false,
      problems: ['step "login": link "Aide en ligne" not recorded', 'step "vehicle": no textbox "Numéro de série"'],
    });

    const reordered = sandboxCopy('reordered', (cassette) => {
      (cassette.steps as unknown[]).reverse();
    });
    expect((await test(reordered)).tested.cassettes[0]?.problems).toEqual([
      'steps login → driver → vehicle → formula → result instead of result → formula → vehicle → driver → login',
    ]);
  });

  it('records a cassette against the running portal, without secrets, which then replays offline', async () => {
    const data = join(dataDir, 'mrh.json');
    writeFileSync(data, JSON.stringify(SANDBOX_PRODUCTS.find((p) => p.code === 'mrh')!.example));
    const recorded = sandboxCopy('recorded', () => undefined);
    rmSync(join(recorded, 'cassettes', 'mrh.json'));
    const serve = await startServeProcess(['--data-dir', dataDir], { COURTIER_SANDBOX: '1' });
    try {
      const run = await runCourtier([
        ...['insurers', 'record', 'sandbox', '--product', 'mrh', '--data', data],
        ...['--out', join(recorded, 'cassettes'), '--data-dir', dataDir, '--json'],
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/Cassette: .*mrh\.json \(\d+ exchanges, 4 steps; secrets, codes and personal data replaced\)/);
      expect(run.stderr).toContain('page "login" as expected');
    } finally {
      await stopChild(serve.child);
    }
    const cassette = readFileSync(join(recorded, 'cassettes', 'mrh.json'), 'utf8');
    expect(cassette).not.toMatch(/password=|"demo"/);
    // The insured's name is personal data: neither in the dicData kept nor in the pages recorded.
    expect(cassette).not.toContain('Marie Curie');
    expect(cassette).not.toContain('Marie+Curie');
    const parsed = JSON.parse(cassette) as {
      dicData: Record<string, unknown>;
      steps: { step: string; path: string; landmarks: string[]; snapshot: string }[];
    };
    expect(parsed.dicData).toMatchObject({ insured_name: 'xxxxxxxxxxx', postcode: '75011' });
    // Each step's page, as the robot found it: its landmarks, and its whole accessibility snapshot.
    expect(parsed.steps.map((s) => [s.step, s.path])).toEqual([
      ['login', '/sandbox/insurer/login'],
      ['dwelling', '/sandbox/insurer/devis/habitation/logement'],
      ['occupation', '/sandbox/insurer/devis/habitation/occupation'],
      ['result', expect.stringMatching(/^\/sandbox\/insurer\/devis\/[0-9a-f]{16}$/)],
    ]);
    expect(parsed.steps[0]?.landmarks).toContain('textbox "Mot de passe"');
    expect(parsed.steps[3]?.snapshot).toMatch(/- heading "Votre tarif" \[level=1\]/);
    const { code, tested } = await test(recorded);
    expect(code).toBe(0);
    expect(tested.cassettes.filter((c) => c.cassette === 'cassettes/mrh.json')).toEqual([
      expect.objectContaining({ ok: true }),
      expect.objectContaining({ line: 'mrh', ok: true }),
    ]);
  });

  it('makes a new adapter package that passes its own test at once, installs, and is refused over a folder in use', async () => {
    const dir = join(dataDir, 'new-acme');
    const made = await runCourtier(['insurers', 'new', 'acme', '--dir', dir, '--data-dir', dataDir, '--json']);
    expect(made.code, made.stderr).toBe(0);
    expect((JSON.parse(made.stdout) as { files: string[] }).files).toEqual([
      'package.json',
      'index.js',
      'pages.js',
      'example.json',
      'cassettes/auto.json',
      'README.md',
    ]);
    const { code, tested } = await test(dir);
    expect(code).toBe(0);
    expect(tested.cassettes).toEqual([expect.objectContaining({ cassette: 'cassettes/auto.json', produit: 'auto', ok: true })]);
    const installed = await runCourtier(['insurers', 'install', dir, '--data-dir', dataDir, '--json']);
    expect(JSON.parse(installed.stdout)).toMatchObject({ code: 'acme', version: '0.1.0', source: 'installed' });
    // Installed, it is tested by its code.
    expect((await test('acme')).code).toBe(0);

    const again = await runCourtier(['insurers', 'new', 'acme', '--dir', dir, '--data-dir', dataDir, '--json']);
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stdout)).toMatchObject({ error: 'usage', message: expect.stringMatching(/is not empty/) as unknown });
    const badCode = await runCourtier(['insurers', 'new', 'Acme!', '--dir', join(dataDir, 'bad'), '--data-dir', dataDir, '--json']);
    expect(badCode.code).toBe(2);
  });
});
