/**
 * `courtier insurers try`, `record` and `test`: an adapter's robot run once against its portal
 * (kept as a cassette when recorded), and a package's cassettes replayed offline.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config.js';
import { UsageError } from '../errors.js';
import { withPackageToTest } from '../insurers/service.js';
import { cassetteResult, personalData, recordedSteps, recordingSecrets, startRecording, type Cassette } from '../insurers/cassette.js';
import { cassetteFiles, replayPackage, type CassetteOutcome } from '../insurers/replay.js';
import { productJsonSchema, RobotError, type PageCheck } from '@courtier/adapter-kit';
import { tryInsurer } from '../automation/try-run.js';
import { createBrowserRuntime } from '../robots/browser.js';
import { canonicalDataDir, listRunningServices, runningServicesDir } from '../running-services.js';
import { parse, print, ReportedFailure, required, withFlagHints, withInsurerDeps, type CliIo } from './common.js';

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
export async function tryRobot(code: string, options: string[], io: CliIo, record: boolean): Promise<void> {
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
export async function testCassettes(target: string, options: string[], io: CliIo): Promise<void> {
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
