import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CLI_ACTOR, recordAudit } from '../audit/service.js';
import { loadConfig } from '../config.js';
import { setInsurerCredentials } from '../credentials/service.js';
import { UsageError } from '../errors.js';
import {
  AdapterRefused,
  installInsurer,
  listInsurers,
  withPackageToTest,
  removeInsurer,
  requestInsurerReload,
  type InsurerListing,
} from '../insurers/service.js';
import { readAdapterPackage } from '../insurers/package-loader.js';
import { cassetteResult, personalData, recordedSteps, recordingSecrets, startRecording, type Cassette } from '../insurers/cassette.js';
import { cassetteFiles, replayPackage, type CassetteOutcome } from '../insurers/replay.js';
import { signPackage } from '../insurers/signature.js';
import { toIso } from '../platform/iso-time.js';
import { insurerCodeSchema, productJsonSchema, RobotError, type PageCheck } from '@courtier/adapter-kit';
import { scaffoldAdapter } from '../insurers/scaffold.js';
import { tryInsurer } from '../automation/try-run.js';
import { createBrowserRuntime } from '../robots/browser.js';
import { canonicalDataDir, listRunningServices, runningServicesDir } from '../running-services.js';
import {
  parse,
  print,
  readStdinPassword,
  ReportedFailure,
  required,
  withDeps,
  withFlagHints,
  withInsurerDeps,
  type CliIo,
} from './common.js';

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

/** One line at a time from standard input when it is not a terminal (a script answering codes). */
function codeReader(io: CliIo): (challenge: string) => Promise<string> {
  let lines: Promise<string[]> | undefined;
  return async (challenge) => {
    io.stderr(`The portal asks for a code: ${challenge}\n`);
    if (io.readHiddenLine) return (await io.readHiddenLine('Code: ')).trim();
    lines ??= io.readStdin().then((text) => text.split(/\r?\n/).filter((line) => line.trim() !== ''));
    const next = (await lines).shift();
    if (next === undefined) throw new RobotError('technical', 'mfa_timeout', 'No code on standard input.');
    return next.trim();
  };
}

/**
 * `insurers try CODE --product P --data FILE`: runs the robot once against its portal, progress on
 * standard error, and keeps its trace. A demo insurer's portal is served by the running service of
 * this data dir, which must be started.
 */
async function tryRobot(code: string, options: string[], io: CliIo, record: boolean): Promise<void> {
  const v = parse(options, {
    product: { type: 'string' },
    data: { type: 'string' },
    cabinet: { type: 'string' },
    headed: { type: 'boolean', default: false },
    ...(record ? { out: { type: 'string' } } : {}),
  });
  const out = record ? resolve(required(v, 'out')) : undefined;
  const produit = required(v, 'product');
  let dicData: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(readFileSync(required(v, 'data'), 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('it must hold a JSON object (the dicData)');
    dicData = parsed as Record<string, unknown>;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--data: ${(err as Error).message.split('\n')[0]}`);
  }
  const config = loadConfig({ dataDir: v['data-dir'] }, io.env);
  const service = listRunningServices(runningServicesDir(io.env)).find(
    (s) => canonicalDataDir(s.data_dir) === canonicalDataDir(config.dataDir),
  );
  let recording: Awaited<ReturnType<typeof startRecording>> | undefined;
  const checks: PageCheck[] = [];
  let productSchema: Record<string, unknown> = {};
  const outcome = await withInsurerDeps(config, io, service?.url, async (deps) => {
    const reach = deps.insurers.get(code)?.reach ?? { origins: [], prefixes: () => [] };
    const product = deps.insurers.get(code)?.products.find((p) => p.code === produit);
    if (product) productSchema = productJsonSchema(product.schema);
    const runtime = createBrowserRuntime({ dataDir: config.dataDir, configuredPath: config.browserPath, headed: v.headed === true });
    try {
      return await withFlagHints(
        () =>
          tryInsurer(
            deps,
            runtime,
            { code, produit, dicData, cabinetId: v.cabinet },
            {
              progress: (step, percent) => io.stderr(`${String(percent).padStart(3)} %  ${step}\n`),
              askCode: codeReader(io),
              outsideReach: (origin) => io.stderr(`blocked: ${origin} (not among the adapter's origins)\n`),
              pageChecked: (check) => {
                checks.push(check);
                io.stderr(`       page "${check.step}" as expected (${check.landmarks.length} landmarks)\n`);
              },
            },
            record ? async (page) => void (recording = await startRecording(page, reach)) : undefined,
          ),
        {
          insurer_credentials_missing: 'Give --cabinet ID, whose credentials were set with courtier insurers set-credentials.',
          // A demo insurer is loaded only with the portal the running service serves.
          ...(service
            ? {}
            : {
                unknown_insurer: 'A demo insurer needs the Courtier service running on this data dir (courtier serve).',
                unknown_product: 'A demo insurer needs the Courtier service running on this data dir (courtier serve).',
              }),
        },
      );
    } finally {
      await runtime.close();
    }
  });
  const { result, artifacts } = outcome;
  const pdf = result.ok && result.value.pdf ? join(artifacts.dir, 'quote.pdf') : null;
  if (pdf && result.ok && result.value.pdf) writeFileSync(pdf, result.value.pdf);
  const summary = {
    ok: result.ok,
    ...(result.ok
      ? { tarif_eur: result.value.tarif_eur, outcome: result.value.outcome, suspens: result.value.suspens ?? null, pdf }
      : { error: { code: result.code, message: result.message, technical: result.technical } }),
    trace: artifacts.trace,
    screenshot: artifacts.screenshot,
    ...(out ? { cassette: result.ok ? join(out, `${produit}.json`) : null } : {}),
  };
  const where = `Trace: ${artifacts.trace ?? 'none'} (open it with npx playwright show-trace)`;
  if (out && result.ok && recording) {
    const { credentials, secretExtras, codes } = outcome.secrets;
    // The client's name or address never lands in a file meant for a repository.
    const personal = personalData(productSchema, dicData);
    const scrubbed = new Map([...personal.replacements, ...recordingSecrets(credentials, secretExtras, codes)]);
    const cassette: Cassette = {
      format: 1,
      insurer: code,
      adapter_version: outcome.adapterVersion,
      produit,
      recorded_at: new Date().toISOString(),
      origin: recording.origin() ?? '',
      dicData: personal.dicData,
      codes: codes.length,
      exchanges: await recording.exchanges(scrubbed),
      steps: recordedSteps(checks, scrubbed),
      result: cassetteResult(result.value),
    };
    mkdirSync(out, { recursive: true });
    const file = join(out, `${produit}.json`);
    writeFileSync(file, `${JSON.stringify(cassette, null, 2)}\n`);
    io.stderr(
      `Cassette: ${file} (${cassette.exchanges.length} exchanges, ${checks.length} steps; secrets, codes and personal data replaced)\n`,
    );
    if (checks.length === 0)
      io.stderr('No step checked its page: give the robot context to expectPage ({ ctx }) to keep each step in the cassette.\n');
  }
  print(
    io,
    v.json,
    summary,
    result.ok
      ? `${result.value.outcome === 'complete' ? 'Priced' : 'Priced without a PDF'}: ${result.value.tarif_eur} €${pdf ? `, PDF ${pdf}` : ''}.\n${where}`
      : `Failed: ${result.code} (${result.technical ? 'technical' : 'business'}): ${result.message}\n${where}`,
  );
  if (!result.ok) throw new ReportedFailure();
}

/** `insurers test PATH_OR_CODE`: replays the package's cassettes offline; exit 1 when one fails. */
async function testCassettes(target: string, options: string[], io: CliIo): Promise<void> {
  const v = parse(options, {});
  const config = loadConfig({ dataDir: v['data-dir'] }, io.env);
  const runtime = createBrowserRuntime({ dataDir: config.dataDir, configuredPath: config.browserPath, headed: false });
  let tested: { dir: string; outcomes: CassetteOutcome[] } | undefined;
  try {
    tested = await withPackageToTest(config, target, async (dir, reported) => {
      if (cassetteFiles(dir).length === 0) {
        throw new UsageError(`${reported} has no cassettes (cassettes/*.json): make one with courtier insurers record`);
      }
      return { dir: reported, outcomes: await replayPackage(dir, runtime) };
    });
  } finally {
    await runtime.close();
  }
  if (!tested) throw new UsageError(`${target}: no such package folder or tarball, nor an insurer built in or installed with that code`);
  const { dir, outcomes } = tested;
  const passed = outcomes.every((o) => o.ok);
  print(
    io,
    v.json,
    { package: dir, passed, cassettes: outcomes },
    outcomes
      .map((o) => {
        const what = o.line ? `${o.cassette} with the common ${o.line} risk` : o.cassette;
        return o.ok ? `✓ ${what} (${o.produit})` : `✗ ${what}: ${o.problems.join('; ')}`;
      })
      .join('\n'),
  );
  if (!passed) throw new ReportedFailure();
}
