import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, watch } from 'node:fs';
import { join, resolve } from 'node:path';
import { ADAPTER_API_VERSION } from '@courtier/adapter-kit';
import type { Config } from '../config.js';
import { packageRoot } from '../paths.js';
import { loadPolicy } from '../policy.js';
import {
  installedPackageDir,
  linkAdapterKit,
  placePackage,
  prunePackages,
  readInstalledIndex,
  stagePackage,
  writeInstalledIndex,
  installedIndexFile,
  installedRoot,
} from './installed.js';
import { AdapterRefused, checkSignature, loadAdapterPackage, readAdapterPackage, type SignaturePolicy } from './package-loader.js';
import { PackageFilesError } from './package-files.js';
import { createInsurerRegistry, type Insurer, type InsurerRegistry, type InsurerSource } from './registry.js';
import { trustedFingerprints } from './signature.js';

export { AdapterRefused } from './package-loader.js';

/** The insurers packaged with Courtier: each folder of insurers/ beside its package.json. */
function builtInDirs(): string[] {
  const root = join(packageRoot(), 'insurers');
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, 'package.json')))
    .map((entry) => join(root, entry.name))
    .sort();
}

/** The IT policy's word on installed adapters' signatures, with what was wrong with it. */
function signaturePolicy(config: Pick<Config, 'policyFile'>): { policy: SignaturePolicy; problems: string[] } {
  const loaded = loadPolicy({ readFile: (path) => readFileSync(path) }, config.policyFile);
  const adapters = loaded.policy.adapters;
  // A policy file that exists but could not be read at all still requires signatures: it fails closed.
  const unreadable = loaded.present && Object.keys(loaded.policy).length === 0 && loaded.problems.length > 0;
  const { fingerprints, problems } = trustedFingerprints(adapters?.trustedKeys ?? []);
  return { policy: { requireSigned: adapters?.requireSigned ?? unreadable, trusted: fingerprints }, problems };
}

export interface InsurerLoadOptions {
  /** This service's base URL, for the sandbox insurers' portals; undefined when the sandbox is off. */
  serviceUrl: (() => string) | undefined;
}

/**
 * Every insurer this install prices with: the built-in packages, then the installed ones. A package
 * that does not load is left out with a problem (one line, for the log and `insurers list`); the
 * others load.
 */
export async function loadInsurers(
  config: Pick<Config, 'dataDir' | 'policyFile'>,
  options: InsurerLoadOptions,
): Promise<{ insurers: Insurer[]; problems: string[] }> {
  const insurers: Insurer[] = [];
  const { policy, problems } = signaturePolicy(config);
  const add = async (dir: string, source: InsurerSource) => {
    try {
      const pkg = readAdapterPackage(dir);
      if (insurers.some((i) => i.code === pkg.courtier.code)) {
        throw new AdapterRefused(
          'adapter_invalid',
          `${pkg.name}@${pkg.version}: another package already provides the insurer ${pkg.courtier.code}.`,
        );
      }
      const signer = source === 'installed' ? checkSignature(dir, pkg, policy) : null;
      const insurer = await loadAdapterPackage(dir, pkg, { source, serviceUrl: options.serviceUrl, signer });
      if (insurer) insurers.push(insurer);
    } catch (err) {
      if (!(err instanceof AdapterRefused)) throw err;
      problems.push(err.message);
    }
  };
  for (const dir of builtInDirs()) await add(dir, 'built-in');
  let index;
  try {
    index = readInstalledIndex(config.dataDir);
  } catch (err) {
    problems.push(
      `${installedIndexFile(config.dataDir)} cannot be read (${(err as Error).message.split('\n')[0]}); no installed insurer loaded.`,
    );
    return { insurers, problems };
  }
  if (Object.keys(index.packages).length > 0) linkAdapterKit(config.dataDir);
  for (const [code, folder] of Object.entries(index.packages)) await add(installedPackageDir(config.dataDir, code, folder), 'installed');
  return { insurers, problems };
}

/** The registry of a service: loaded now, and loaded again by reloadInsurers. */
export async function createLoadedRegistry(
  config: Pick<Config, 'dataDir' | 'policyFile'>,
  options: InsurerLoadOptions,
): Promise<InsurerRegistry> {
  const { insurers, problems } = await loadInsurers(config, options);
  return createInsurerRegistry(insurers, problems);
}

/**
 * Watches the installed adapters' index: an install, a removal or `courtier insurers reload` (from
 * the CLI, another process) reloads the registry. Returns the function that stops watching.
 */
export function watchInstalledInsurers(
  config: Pick<Config, 'dataDir' | 'policyFile'>,
  options: InsurerLoadOptions,
  registry: InsurerRegistry,
  report: (event: { insurers: string[]; problems: string[] } | { error: Error }) => void,
): () => void {
  const root = installedRoot(config.dataDir);
  rmSync(join(root, 'staging'), { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  let timer: NodeJS.Timeout | undefined;
  let reloading: Promise<void> = Promise.resolve();
  const reload = () => {
    reloading = reloading.then(async () => {
      try {
        const { insurers, problems } = await loadInsurers(config, options);
        registry.replace(insurers, problems);
        report({ insurers: insurers.map((i) => `${i.code}@${i.version}`), problems });
      } catch (err) {
        report({ error: err as Error });
      }
    });
  };
  const watcher = watch(root, { persistent: false }, (_event, file) => {
    if (file !== 'installed.json') return;
    // Writers rename a whole file into place: one reload for the burst of events it makes.
    clearTimeout(timer);
    timer = setTimeout(reload, 50);
  });
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}

/** One insurer as `courtier insurers list` and the console show it. */
export interface InsurerListing {
  code: string;
  name: string;
  version: string;
  /** The range of adapter API its package targets. */
  api_version: string;
  source: InsurerSource;
  /** Who signed it: a key fingerprint and whether the IT policy trusts it; null when unsigned (built-ins are the application's). */
  signed: { by: string; trusted: boolean } | null;
  products: { code: string; label: string; kind: string }[];
}

export function listInsurers(registry: InsurerRegistry): { adapter_api: string; insurers: InsurerListing[]; problems: string[] } {
  return {
    adapter_api: ADAPTER_API_VERSION,
    insurers: registry.list().map((insurer) => ({
      code: insurer.code,
      name: insurer.name,
      version: insurer.version,
      api_version: insurer.origin?.apiRange ?? ADAPTER_API_VERSION,
      source: insurer.origin?.source ?? 'built-in',
      signed: insurer.origin?.signer ? { by: insurer.origin.signer.fingerprint, trusted: insurer.origin.signer.trusted } : null,
      products: insurer.products.map((p) => ({ code: p.code, label: p.label, kind: p.kind })),
    })),
    problems: [...registry.problems()],
  };
}

/**
 * Installs a package (a folder or a .tgz) into the data dir, after every check a load makes: the
 * manifest, the adapter API version, the signature against the IT policy, and its code against its
 * manifest. A running service picks it up through the index it watches. Replaces an installed
 * package of the same insurer (an update, or going back to an earlier version).
 */
export async function installInsurer(config: Pick<Config, 'dataDir' | 'policyFile'>, source: string): Promise<InsurerListing> {
  if (!existsSync(source)) throw new AdapterRefused('adapter_invalid', `${source}: no such file or folder.`);
  const isTarball = statSync(source).isFile();
  let staging: string;
  try {
    staging = stagePackage(config.dataDir, source, isTarball);
  } catch (err) {
    if (err instanceof PackageFilesError) throw new AdapterRefused('adapter_invalid', `${source}: ${err.message}`);
    throw err;
  }
  try {
    const pkg = readAdapterPackage(staging);
    const code = pkg.courtier.code;
    if (pkg.courtier.sandbox) {
      throw new AdapterRefused(
        'adapter_invalid',
        `${pkg.name}@${pkg.version} declares a sandbox portal; only the insurers built into Courtier have one.`,
      );
    }
    if (builtInDirs().some((dir) => readAdapterPackage(dir).courtier.code === code)) {
      throw new AdapterRefused('adapter_invalid', `${code} is an insurer built into Courtier; an installed package cannot replace it.`);
    }
    const { policy } = signaturePolicy(config);
    const signer = checkSignature(staging, pkg, policy);
    linkAdapterKit(config.dataDir);
    const folder = placePackage(config.dataDir, staging, code, pkg.version);
    const dir = installedPackageDir(config.dataDir, code, folder);
    const index = readInstalledIndex(config.dataDir);
    const previous = index.packages[code];
    let insurer: Insurer | null;
    try {
      insurer = await loadAdapterPackage(dir, pkg, { source: 'installed', serviceUrl: undefined, signer });
    } catch (err) {
      // A package whose code does not load leaves nothing behind (unless it is the one installed already).
      prunePackages(config.dataDir, code, previous);
      throw err;
    }
    if (!insurer) throw new AdapterRefused('adapter_invalid', `${pkg.name}@${pkg.version} did not load.`);
    writeInstalledIndex(config.dataDir, { ...index, packages: { ...index.packages, [code]: folder } });
    if (previous !== folder) prunePackages(config.dataDir, code, folder);
    return listInsurers(createInsurerRegistry([insurer])).insurers[0]!;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Removes an installed insurer; false when none of that code is installed. Its jobs keep their history. */
export function removeInsurer(config: Pick<Config, 'dataDir'>, code: string): boolean {
  const index = readInstalledIndex(config.dataDir);
  if (!(code in index.packages)) return false;
  const { [code]: _removed, ...packages } = index.packages;
  writeInstalledIndex(config.dataDir, { ...index, packages });
  prunePackages(config.dataDir, code, undefined);
  return true;
}

/** Asks every service running on this data dir to read its adapters again. */
export function requestInsurerReload(config: Pick<Config, 'dataDir'>, now: string): void {
  writeInstalledIndex(config.dataDir, { ...readInstalledIndex(config.dataDir), touched_at: now });
}

/** This service's base URL on this machine, for its robots to reach the sandbox portals it serves. */
export function localServiceUrl(host: string, port: number): string {
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}

/** One built-in insurer, loaded from its package as a service loads it (benchmarks and tests use it). */
export async function loadBuiltInInsurer(code: string, serviceUrl: () => string): Promise<Insurer> {
  for (const dir of builtInDirs()) {
    const pkg = readAdapterPackage(dir);
    if (pkg.courtier.code !== code) continue;
    const insurer = await loadAdapterPackage(dir, pkg, { source: 'built-in', serviceUrl, signer: null });
    if (insurer) return insurer;
  }
  throw new Error(`No built-in insurer ${code}.`);
}

/** The folder of the package of an insurer built in or installed here, by its code. */
function packageDirOf(config: Pick<Config, 'dataDir'>, code: string): string | undefined {
  const builtIn = builtInDirs().find((dir) => readAdapterPackage(dir).courtier.code === code);
  if (builtIn) return builtIn;
  const folder = readInstalledIndex(config.dataDir).packages[code];
  return folder === undefined ? undefined : installedPackageDir(config.dataDir, code, folder);
}

/**
 * Runs `work` on a package to test: an insurer built in or installed here (by code or folder), or
 * any other package folder, copied as an install would copy it into the data dir, where its import
 * of the adapter kit finds this Courtier's.
 */
export async function withPackageToTest<T>(
  config: Pick<Config, 'dataDir'>,
  target: string,
  work: (dir: string, reported: string) => Promise<T>,
): Promise<T | undefined> {
  const known = existsSync(target) ? undefined : packageDirOf(config, target);
  if (known) return work(known, known);
  if (!existsSync(target)) return undefined;
  const dir = resolve(target);
  if (builtInDirs().includes(dir)) return work(dir, dir);
  let staging: string;
  try {
    staging = stagePackage(config.dataDir, dir, statSync(dir).isFile());
  } catch (err) {
    if (err instanceof PackageFilesError) throw new AdapterRefused('adapter_invalid', `${target}: ${err.message}`);
    throw err;
  }
  try {
    linkAdapterKit(config.dataDir);
    return await work(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
