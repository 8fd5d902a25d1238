import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { productJsonSchema, z } from '@courtier/adapter-kit';

/** A built-in insurer's version and adapter API range, as its package.json under insurers/ says. */
export function builtInPackage(code: string): { version: string; apiRange: string } {
  const pkg = JSON.parse(readFileSync(resolve('insurers', code, 'package.json'), 'utf8')) as {
    version: string;
    engines: Record<string, string>;
  };
  return { version: pkg.version, apiRange: pkg.engines['courtier-adapter-api']! };
}

/** The product of the fixture adapters: what their code declares, and so what their manifest must say. */
const schema = z.object({ ref: z.string().min(1).describe('Référence du dossier') });
const example = { ref: 'A-1' };

export interface FixtureAdapter {
  code: string;
  version?: string;
  /** engines["courtier-adapter-api"]. */
  apiRange?: string;
  /** What its robot prices at. */
  tarif?: number;
  /** Changes to the manifest after it is made (to make it wrong). */
  manifest?: (manifest: Record<string, unknown>) => void;
}

/**
 * Writes a third-party adapter package into `dir` as an integrator ships it: a package.json with its
 * manifest, and compiled JavaScript that imports @courtier/adapter-kit only.
 */
export function writeAdapterPackage(dir: string, adapter: FixtureAdapter): string {
  const { code, version = '1.0.0', apiRange = '^1.0.0', tarif = 321.5 } = adapter;
  const manifest: Record<string, unknown> = {
    code,
    name: `${code} Assurances`,
    products: [{ code: 'auto', label: 'Assurance auto', kind: 'quote', schema: productJsonSchema(schema), example }],
    credentials: {
      login: 'Identifiant',
      password: 'Mot de passe',
      extra: [
        { name: 'broker_code', label: 'Code courtier', secret: false },
        { name: 'pin', label: 'Code PIN', secret: true },
      ],
    },
    humanSteps: ['otp_sms'],
    origins: ['https://extranet.example.fr'],
  };
  adapter.manifest?.(manifest);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  const pkg = {
    name: `courtier-insurer-${code}`,
    version,
    type: 'module',
    main: 'dist/index.js',
    keywords: ['courtier-insurer'],
    engines: { 'courtier-adapter-api': apiRange },
    peerDependencies: { '@courtier/adapter-kit': apiRange },
    courtier: manifest,
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(
    join(dir, 'dist', 'index.js'),
    `import { defineInsurer, RobotError, z } from '@courtier/adapter-kit';
const schema = z.object({ ref: z.string().min(1).describe('Référence du dossier') });
export default defineInsurer(() => ({
  products: [{ code: 'auto', label: 'Assurance auto', kind: 'quote', schema, example: ${JSON.stringify(example)} }],
  async run(ctx, input) {
    ctx.progress('pricing', 50);
    // The robot logs in with every credential field its manifest declares, the secret PIN included.
    const { extra } = ctx.credentials();
    if (!extra.broker_code || !extra.pin) throw new RobotError('business', 'invalid_credentials', 'The broker code or the PIN is missing.');
    if (input.dicData.ref === 'refused') throw new RobotError('business', 'risk_declined', 'The insurer declined the risk.');
    ctx.markSubmitted();
    return { tarif_eur: ${tarif}, outcome: 'partial' };
  },
}));
`,
  );
  return dir;
}
