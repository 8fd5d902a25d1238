import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { humanSteps, RISK_EXAMPLES, RobotError, type PageCheck, type RiskLine, type RobotContext } from '@courtier/adapter-kit';
import type { BrowserRuntime } from '../robots/browser.js';
import { cassetteSchema, compareResult, compareSteps, REPLAY_CREDENTIALS, startReplay, type Cassette } from './cassette.js';
import { loadAdapterPackage, readAdapterPackage } from './package-loader.js';
import type { Insurer } from './registry.js';
import { mapRisk, placeholderAnswers } from './risk-mapping.js';

/** One cassette's replay: passed, or what went wrong. */
export interface CassetteOutcome {
  cassette: string;
  produit: string | null;
  /** Set when the cassette was replayed with the common risk of this line, as the adapter maps it. */
  line?: RiskLine;
  ok: boolean;
  problems: string[];
}

/** The cassettes of a package: its cassettes/ folder's .json files, by name. */
export function cassetteFiles(packageDir: string): string[] {
  const dir = join(packageDir, 'cassettes');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(dir, name));
}

function readCassette(file: string): Cassette {
  return cassetteSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/**
 * Replays every cassette of the package in `packageDir` offline: the robot runs in a real browser,
 * every request is answered from the cassette (none leaves the machine), the result must be the
 * recorded one, and each step must find the page (its landmarks) the recording found. The package's
 * code is loaded again for each cassette, with the cassette's origin as a sandbox insurer's portal.
 * Then, for each line the package prices from the common risk, its product's cassette is replayed
 * with the line's example risk as the adapter maps it: the portal's form takes every mapped value.
 */
export async function replayPackage(packageDir: string, runtime: BrowserRuntime): Promise<CassetteOutcome[]> {
  const pkg = readAdapterPackage(packageDir);
  const outcomes: CassetteOutcome[] = [];
  for (const file of cassetteFiles(packageDir)) {
    const name = file.slice(packageDir.length + 1);
    let cassette: Cassette;
    try {
      cassette = readCassette(file);
    } catch (err) {
      outcomes.push({ cassette: name, produit: null, ok: false, problems: [`not a cassette: ${(err as Error).message.split('\n')[0]}`] });
      continue;
    }
    const insurer = await loadAdapterPackage(packageDir, pkg, { source: 'built-in', serviceUrl: () => cassette.origin, signer: null });
    if (!insurer) throw new Error(`${pkg.name} did not load.`);
    outcomes.push({ cassette: name, produit: cassette.produit, ...(await replayOne(insurer, cassette, runtime, name)) });
  }
  for (const [line, produit] of Object.entries(pkg.courtier.lines) as [RiskLine, string][]) {
    const file = cassetteFiles(packageDir).find((f) => f.endsWith(`/${produit}.json`));
    const name = file ? file.slice(packageDir.length + 1) : `cassettes/${produit}.json`;
    if (!file) {
      outcomes.push({ cassette: name, produit, line, ok: false, problems: [`no cassette of ${produit} to replay the line ${line} on`] });
      continue;
    }
    const cassette = readCassette(file);
    const insurer = await loadAdapterPackage(packageDir, pkg, { source: 'built-in', serviceUrl: () => cassette.origin, signer: null });
    if (!insurer) throw new Error(`${pkg.name} did not load.`);
    const risk = RISK_EXAMPLES[line];
    const asked = mapRisk(insurer, line, risk, {});
    const mapped =
      !asked.ok && asked.reason === 'answers_missing' ? mapRisk(insurer, line, risk, placeholderAnswers(asked.questions)) : asked;
    if (!mapped.ok) {
      outcomes.push({ cassette: name, produit, line, ok: false, problems: [`the common ${line} risk: ${mapped.message}`] });
      continue;
    }
    const replayed = await replayOne(insurer, { ...cassette, dicData: mapped.dicData }, runtime, `${name}-${line}`);
    outcomes.push({ cassette: name, produit, line, ...replayed });
  }
  return outcomes;
}

async function replayOne(
  insurer: Insurer,
  cassette: Cassette,
  runtime: BrowserRuntime,
  name: string,
): Promise<{ ok: boolean; problems: string[] }> {
  const problems: string[] = [];
  if (cassette.insurer !== insurer.code) problems.push(`recorded with ${cassette.insurer}, not ${insurer.code}`);
  const session = runtime.session(`replay-${name.replace(/[^A-Za-z0-9-]/g, '-')}`, { secrets: [] });
  let replay: ReturnType<typeof startReplay> | undefined;
  const controller = new AbortController();
  const checks: PageCheck[] = [];
  const ctx: RobotContext = {
    jobId: `replay-${name}`,
    credentials: () => REPLAY_CREDENTIALS,
    signal: controller.signal,
    openPage: async () => {
      const page = await session.openPage();
      await (replay ??= startReplay(page, cassette));
      return page;
    },
    withSecrets: (secrets, work) => session.withSecrets(secrets, work),
    progress: () => undefined,
    markSubmitted: () => undefined,
    pageChecked: (check) => checks.push(check),
    // The portal's answer is in the cassette: any code, the first choice, an approval do.
    ...humanSteps(insurer.humanSteps, (step) =>
      Promise.resolve(step.kind === 'question' && step.choices?.[0] ? step.choices[0].value : '000000'),
    ),
  };
  try {
    const result = await insurer.run(ctx, { produit: cassette.produit, dicData: cassette.dicData });
    problems.push(...compareResult(cassette, result), ...compareSteps(cassette, checks));
  } catch (err) {
    problems.push(
      err instanceof RobotError ? `${err.code}: ${err.message}` : `the robot crashed: ${String((err as Error)?.message ?? err)}`,
    );
  } finally {
    await session.finish('abandoned');
  }
  const unexpected = replay ? (await replay).unexpected : [];
  if (unexpected.length > 0)
    problems.push(`requests the cassette does not hold: ${unexpected.slice(0, 5).join(', ')}${unexpected.length > 5 ? '…' : ''}`);
  return { ok: problems.length === 0, problems };
}
