import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CLI_ACTOR, recordAudit } from '../audit/service.js';
import { loadConfig } from '../config.js';
import { setInsurerCredentials } from '../credentials/service.js';
import { UsageError } from '../errors.js';
import {
  AdapterRefused,
  installInsurer,
  listInsurers,
  removeInsurer,
  requestInsurerReload,
  type InsurerListing,
} from '../insurers/service.js';
import { readAdapterPackage } from '../insurers/package-loader.js';
import { signPackage } from '../insurers/signature.js';
import { toIso } from '../platform/iso-time.js';
import { insurerCodeSchema } from '@courtier/adapter-kit';
import { scaffoldAdapter } from '../insurers/scaffold.js';
import { parse, print, readStdinPassword, required, withDeps, type CliIo } from './common.js';
import { testCassettes, tryRobot } from './insurer-runs.js';

const SUBCOMMANDS = 'list, new, install, remove, reload, sign, try, record, test or set-credentials';

/** `insurers install PATH --json`: the path comes first, the options after it. */
function positional(rest: string[], what: string): [string, string[]] {
  const [first, ...options] = rest;
  if (first === undefined || first.startsWith('--')) throw new UsageError(`give the ${what} first`);
  return [first, options];
}

function describe(insurer: InsurerListing): string {
  const signed = insurer.signed
    ? `signed by ${insurer.signed.by}${insurer.signed.trusted ? ' (trusted)' : ''}`
    : insurer.source === 'built-in'
      ? 'built in'
      : 'unsigned';
  return `${insurer.code}  ${insurer.name}  ${insurer.version}  (adapter API ${insurer.api_version}, ${signed})  [${insurer.products.map((p) => p.code).join(', ')}]`;
}

export async function runInsurers(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'list': {
      const v = parse(rest, {});
      const listing = await withDeps(v['data-dir'], io, (deps) => listInsurers(deps.insurers));
      const lines = listing.insurers.length ? listing.insurers.map(describe) : ['No insurer robots in this install.'];
      const problems = listing.problems.map((p) => `not loaded: ${p}`);
      print(io, v.json, listing, [`Adapter API ${listing.adapter_api}`, ...lines, ...problems].join('\n'));
      return;
    }
    case 'new': {
      const [code, options] = positional(rest, 'insurer code');
      const v = parse(options, { dir: { type: 'string' } });
      const checked = insurerCodeSchema.safeParse(code);
      if (!checked.success) throw new UsageError(`the insurer code "${code}": ${checked.error.issues[0]?.message ?? 'invalid'}`);
      const dir = resolve(v.dir ?? code);
      let files: string[];
      try {
        files = scaffoldAdapter(dir, code);
      } catch (err) {
        throw new UsageError(`--dir: ${(err as Error).message}`);
      }
      print(
        io,
        v.json,
        { dir, files },
        `A new adapter package for ${code} in ${dir}:\n${files.map((f) => `  ${f}`).join('\n')}\nIt passes its test at once: courtier insurers test ${dir}\nNext steps: its README.md.`,
      );
      return;
    }
    case 'install': {
      const [path, options] = positional(rest, 'package folder or .tgz');
      const v = parse(options, {});
      const config = loadConfig({ dataDir: v['data-dir'] }, io.env);
      const installed = await installInsurer(config, resolve(path));
      await withDeps(v['data-dir'], io, (deps) =>
        recordAudit(deps, {
          cabinetId: null,
          action: 'insurer_adapter.installed',
          actor: CLI_ACTOR,
          target: installed.code,
          details: { version: installed.version, signed_by: installed.signed?.by ?? null },
        }),
      );
      print(io, v.json, installed, `Installed ${describe(installed)}.\nA running service loads it by itself.`);
      return;
    }
    case 'remove': {
      const [code, options] = positional(rest, 'insurer code');
      const v = parse(options, {});
      const config = loadConfig({ dataDir: v['data-dir'] }, io.env);
      if (!removeInsurer(config, code))
        throw new AdapterRefused('adapter_invalid', `No installed insurer ${code} (built-in insurers cannot be removed).`);
      await withDeps(v['data-dir'], io, (deps) =>
        recordAudit(deps, { cabinetId: null, action: 'insurer_adapter.removed', actor: CLI_ACTOR, target: code }),
      );
      print(io, v.json, { removed: code }, `Removed ${code}; its jobs keep their history.`);
      return;
    }
    case 'reload': {
      const v = parse(rest, {});
      const config = loadConfig({ dataDir: v['data-dir'] }, io.env);
      requestInsurerReload(config, toIso(Date.now()));
      print(io, v.json, { reload_requested: true }, 'A running service on this data dir reads its insurer adapters again.');
      return;
    }
    case 'sign': {
      const [path, options] = positional(rest, 'package folder');
      const v = parse(options, { key: { type: 'string' } });
      const dir = resolve(path);
      let pem: string;
      try {
        pem = readFileSync(required(v, 'key'), 'utf8');
      } catch (err) {
        if (err instanceof UsageError) throw err;
        throw new UsageError(`--key: ${(err as Error).message.split('\n')[0]}`);
      }
      const pkg = readAdapterPackage(dir);
      let fingerprint: string;
      try {
        fingerprint = signPackage(dir, pkg, pem);
      } catch (err) {
        if (err instanceof AdapterRefused) throw err;
        throw new UsageError(`--key: not an ed25519 private key in PEM (${(err as Error).message.split('\n')[0]})`);
      }
      print(
        io,
        v.json,
        { package: pkg.name, version: pkg.version, signed_by: fingerprint },
        `Signed ${pkg.name}@${pkg.version} with ${fingerprint}: courtier-signature.json written.`,
      );
      return;
    }
    case 'try': {
      const [code, options] = positional(rest, 'insurer code');
      return tryRobot(code, options, io, false);
    }
    case 'record': {
      const [code, options] = positional(rest, 'insurer code');
      return tryRobot(code, options, io, true);
    }
    case 'test': {
      const [target, options] = positional(rest, 'package folder or insurer code');
      return testCassettes(target, options, io);
    }
    case 'set-credentials':
      return setCredentials(rest, io);
    default:
      throw new UsageError(`unknown insurers command "${sub ?? ''}"; use ${SUBCOMMANDS}`);
  }
}

async function setCredentials(rest: string[], io: CliIo): Promise<void> {
  const v = parse(rest, {
    cabinet: { type: 'string' },
    compagnie: { type: 'string' },
    login: { type: 'string' },
    'password-stdin': { type: 'boolean', default: false },
    extra: { type: 'string' },
  });
  const cabinet = required(v, 'cabinet');
  const compagnie = required(v, 'compagnie');
  const login = required(v, 'login');
  // Passwords never on the command line, where the process list would show them.
  if (v['password-stdin'] !== true) throw new UsageError('give the password on standard input with --password-stdin');
  const password = await readStdinPassword(io, `Password of ${login} at ${compagnie} (not shown): `);
  if (password === '') throw new UsageError('the password read from standard input is empty');
  const extra: Record<string, string> = {};
  for (const pair of v.extra?.split(',').filter(Boolean) ?? []) {
    const [key, ...value] = pair.split('=');
    if (!key || value.length === 0) throw new UsageError('--extra takes key=value pairs separated by commas');
    extra[key.trim()] = value.join('=').trim();
  }
  const result = await withDeps(v['data-dir'], io, (deps) => {
    const saved = setInsurerCredentials(deps, cabinet, compagnie, { login, password, extra });
    recordAudit(deps, { cabinetId: cabinet, action: 'insurer_credentials.set', actor: CLI_ACTOR, target: compagnie, details: { login } });
    return saved;
  });
  print(io, v.json, result, `Credentials for ${compagnie} saved (login ${result.login}); the password is stored encrypted.`);
}
