import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import {
  ADAPTER_API_VERSION,
  adapterPackageSchema,
  productJsonSchema,
  type AdapterPackage,
  type InsurerAdapter,
  type InsurerHost,
} from '@courtier/adapter-kit';
import semver from 'semver';
import type { AdapterSigner, Insurer, InsurerSource } from './registry.js';
import { readSigner, SignatureError } from './signature.js';

/** Why a package was not loaded: a stable code and a sentence for the person who installs it. */
export class AdapterRefused extends Error {
  override name = 'AdapterRefused';
  constructor(
    readonly code:
      | 'adapter_invalid'
      | 'adapter_api_mismatch'
      | 'adapter_unsigned'
      | 'adapter_signature_invalid'
      | 'adapter_signer_untrusted'
      | 'adapter_load_failed'
      | 'adapter_code_mismatch',
    message: string,
  ) {
    super(message);
  }
}

const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;

/** The package.json of the package in `dir`, checked: the manifest, the versions, the entry's place. */
export function readAdapterPackage(dir: string): AdapterPackage {
  const path = join(dir, 'package.json');
  let json: unknown;
  try {
    if (statSync(path).size > MAX_PACKAGE_JSON_BYTES) throw new Error('larger than 1 MiB');
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AdapterRefused('adapter_invalid', `${path}: ${code === 'ENOENT' ? 'not found' : (err as Error).message.split('\n')[0]}.`);
  }
  const parsed = adapterPackageSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'package.json'}: ${i.message}`).slice(0, 5);
    throw new AdapterRefused('adapter_invalid', `${path} is not an insurer adapter's: ${problems.join('; ')}.`);
  }
  const pkg = parsed.data;
  const label = `${pkg.name}@${pkg.version}`;
  if (!semver.valid(pkg.version)) throw new AdapterRefused('adapter_invalid', `${label}: its version is not semver (1.2.3).`);
  const range = pkg.engines['courtier-adapter-api'];
  if (!semver.validRange(range)) {
    throw new AdapterRefused('adapter_invalid', `${label}: engines["courtier-adapter-api"] "${range}" is not a semver range.`);
  }
  if (!semver.satisfies(ADAPTER_API_VERSION, range)) {
    throw new AdapterRefused(
      'adapter_api_mismatch',
      `${label} targets adapter API ${range}; this Courtier provides adapter API ${ADAPTER_API_VERSION}. Install a version of the adapter made for it.`,
    );
  }
  const entry = join(dir, pkg.main);
  const inside = relative(dir, entry);
  if (inside.startsWith('..') || isAbsolute(inside))
    throw new AdapterRefused('adapter_invalid', `${label}: "main" points outside the package.`);
  return pkg;
}

/** What the IT policy says of installed packages' signatures. */
export interface SignaturePolicy {
  requireSigned: boolean;
  /** Fingerprints of the trusted keys. */
  trusted: ReadonlySet<string>;
}

/** Who signed the package; refuses a bad signature always, and an unsigned or untrusted one when the policy says so. */
export function checkSignature(dir: string, pkg: AdapterPackage, policy: SignaturePolicy): AdapterSigner | null {
  const label = `${pkg.name}@${pkg.version}`;
  let signer: AdapterSigner | null;
  try {
    signer = readSigner(dir, pkg, policy.trusted);
  } catch (err) {
    if (err instanceof SignatureError) throw new AdapterRefused(err.code, `${label}: ${err.message}`);
    throw err;
  }
  if (policy.requireSigned && !signer) {
    throw new AdapterRefused('adapter_unsigned', `${label} is not signed, and this machine's IT policy accepts signed adapters only.`);
  }
  if (policy.requireSigned && signer && !signer.trusted) {
    throw new AdapterRefused(
      'adapter_signer_untrusted',
      `${label} is signed by ${signer.fingerprint}, a key this machine's IT policy does not trust.`,
    );
  }
  return signer;
}

export interface LoadOptions {
  source: InsurerSource;
  /** This service's base URL (for a sandbox insurer's portal); undefined when the sandbox is off. */
  serviceUrl: (() => string) | undefined;
  signer: AdapterSigner | null;
}

/**
 * Imports the package's code and checks it against its manifest. Null for a sandbox insurer when
 * the sandbox is off (it has no portal to reach).
 */
export async function loadAdapterPackage(dir: string, pkg: AdapterPackage, options: LoadOptions): Promise<Insurer | null> {
  const manifest = pkg.courtier;
  const label = `${pkg.name}@${pkg.version}`;
  const { sandbox } = manifest;
  if (sandbox && !options.serviceUrl) return null;
  const serviceUrl = options.serviceUrl;
  const sandboxUrl = () => {
    if (!sandbox || !serviceUrl) throw new Error(`${manifest.code} is not a sandbox insurer: it has no portal on this service.`);
    return `${serviceUrl().replace(/\/+$/, '')}${sandbox.path}`;
  };
  const host: InsurerHost = { sandboxUrl };
  let adapter: InsurerAdapter;
  try {
    const module = (await import(pathToFileURL(join(dir, pkg.main)).href)) as { default?: unknown };
    if (typeof module.default !== 'function') throw new Error('its entry has no default export made by defineInsurer()');
    adapter = (module.default as (host: InsurerHost) => InsurerAdapter)(host);
    if (!Array.isArray(adapter?.products) || typeof adapter.run !== 'function')
      throw new Error('its factory did not return { products, run }');
  } catch (err) {
    throw new AdapterRefused(
      'adapter_load_failed',
      `${label}: its code failed to load (${String((err as Error)?.message ?? err).split('\n')[0]}).`,
    );
  }
  checkProducts(label, pkg, adapter);
  checkLines(label, pkg, adapter);
  return insurerFromPackage(pkg, adapter, { source: options.source, dir, signer: options.signer, sandboxUrl });
}

/** The insurer a package makes: its code's adapter, with what its manifest says. */
export function insurerFromPackage(
  pkg: AdapterPackage,
  adapter: InsurerAdapter,
  options: { source: InsurerSource; dir: string; signer: AdapterSigner | null; sandboxUrl: () => string },
): Insurer {
  const { sandbox, origins } = pkg.courtier;
  return {
    ...adapter,
    code: pkg.courtier.code,
    name: pkg.courtier.name,
    version: pkg.version,
    credentialFields: pkg.courtier.credentials,
    humanSteps: pkg.courtier.humanSteps,
    ...(sandbox ? { testKeys: { demoCredentials: { ...sandbox.demoCredentials, extra: {} } } } : {}),
    reach: { origins, prefixes: () => (sandbox ? [`${options.sandboxUrl()}/`] : []) },
    origin: { source: options.source, apiRange: pkg.engines['courtier-adapter-api'], dir: options.dir, signer: options.signer },
  };
}

/** The code's products are the manifest's: same codes, labels, kinds, JSON Schemas and examples. */
function checkProducts(label: string, pkg: AdapterPackage, adapter: InsurerAdapter): void {
  const declared = pkg.courtier.products;
  const codes = (list: readonly { code: string }[]) => list.map((p) => p.code).join(', ');
  if (codes(declared) !== codes(adapter.products)) {
    throw new AdapterRefused(
      'adapter_code_mismatch',
      `${label}: its manifest lists the products ${codes(declared)}, its code ${codes(adapter.products)}.`,
    );
  }
  for (const [index, product] of adapter.products.entries()) {
    const manifest = declared[index]!;
    const differs = (what: string) =>
      new AdapterRefused(
        'adapter_code_mismatch',
        `${label}: the ${what} of product ${product.code} differs between its manifest and its code.`,
      );
    if (manifest.label !== product.label) throw differs('label');
    if (manifest.kind !== product.kind) throw differs('kind');
    if (!isDeepStrictEqual(manifest.schema, productJsonSchema(product.schema))) throw differs('dicData JSON Schema');
    if (!isDeepStrictEqual(manifest.example, product.example)) throw differs('example');
    if (!product.schema.safeParse(product.example).success) throw differs('example (it does not pass the schema)');
  }
}

/** The lines the code maps are the manifest's, each to one of its quote products. */
function checkLines(label: string, pkg: AdapterPackage, adapter: InsurerAdapter): void {
  const declared = pkg.courtier.lines;
  const mapped = Object.fromEntries(Object.entries(adapter.risks ?? {}).map(([line, mapping]) => [line, mapping?.produit]));
  if (!isDeepStrictEqual(declared, mapped)) {
    throw new AdapterRefused(
      'adapter_code_mismatch',
      `${label}: its manifest prices the lines ${JSON.stringify(declared)}, its code ${JSON.stringify(mapped)}.`,
    );
  }
  for (const [line, produit] of Object.entries(declared)) {
    if (!adapter.products.some((p) => p.code === produit && p.kind === 'quote'))
      throw new AdapterRefused(
        'adapter_code_mismatch',
        `${label}: the line ${line} is priced by ${produit}, which is not one of its quote products.`,
      );
  }
}
