import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import {
  humanSteps,
  RobotError,
  type HumanStep,
  type InsurerCredentials,
  type PageCheck,
  type RobotContext,
  type RobotResult,
} from '@courtier/adapter-kit';
import { credentialSecrets, readInsurerCredentials, secretExtraFields } from '../credentials/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import type { BrowserRuntime } from '../robots/browser.js';
import { checkDicData, findProduct } from './catalogue.js';

/** What a person trying an adapter sees and answers while it runs. */
export interface TryConsole {
  progress(step: string, percent: number): void;
  /** The portal asks for a code (an SMS, an app): what the person types. */
  askCode(challenge: string): Promise<string>;
  /** A request the adapter's manifest does not allow was blocked. */
  outsideReach(origin: string): void;
  /** A step found the page it expects (a recording keeps its snapshot). */
  pageChecked(check: PageCheck): void;
}

/** What the terminal says for a step: the prompt, then what to type (a terminal shows no captcha image). */
function terminalPrompt(step: HumanStep): string {
  if (step.kind === 'app_approval') return `${step.prompt} (press Enter once approved in the insurer's app)`;
  if (step.kind === 'captcha') return `${step.prompt} (the captcha image is not shown here; type its text)`;
  if (step.kind === 'question' && step.choices) return `${step.prompt} (${step.choices.map((c) => `${c.value}: ${c.label}`).join(', ')})`;
  return step.prompt;
}

export interface TryOutcome {
  /** The robot's result, or what it threw (its message with no secret in it). */
  result: { ok: true; value: RobotResult } | { ok: false; code: string; message: string; technical: boolean };
  /** The trace and screenshot of the run, kept whatever its outcome (secrets kept out as for a job). */
  artifacts: { dir: string; trace: string | null; screenshot: string | null };
  /** The version of the adapter that ran. */
  adapterVersion: string;
  /** What a recording of the run must scrub: the credentials used, which extra fields are secrets, the codes typed. */
  secrets: { credentials: InsurerCredentials; secretExtras: string[]; codes: string[] };
}

/**
 * Runs an insurer's robot once, outside the job queue (no credits, no quote, nothing stored but
 * its trace), with the cabinet's credentials or, for a demo insurer, its public demo account: what
 * an adapter's author or a cabinet's IT runs to see a robot work against its portal.
 */
export async function tryInsurer(
  deps: Deps,
  runtime: BrowserRuntime,
  input: { code: string; produit: string; dicData: Record<string, unknown>; cabinetId: string | undefined },
  console: TryConsole,
  /** Called with the run's first page before the robot uses it (a recording starts there). */
  onFirstPage?: (page: Page) => Promise<void>,
): Promise<TryOutcome> {
  const { adapter, product } = findProduct(deps, input.produit, input.code);
  const checked = checkDicData(product, input.dicData);
  if (!checked.ok) {
    throw new ApiError('validation_error', `The data does not fit ${adapter.name}'s ${product.code}.`, checked.issues);
  }
  const credentials = credentialsFor(deps, input.cabinetId, input.code, adapter.testKeys?.demoCredentials);
  const id = `try-${randomUUID()}`;
  const session = runtime.session(id, {
    secrets: credentialSecrets(deps, input.code, credentials),
    ...(adapter.reach ? { reach: adapter.reach } : {}),
    onOutsideReach: (origin) => console.outsideReach(origin),
  });
  const controller = new AbortController();
  let firstPage: Promise<void> | undefined;
  const openPage = async () => {
    const page = await session.openPage();
    await (firstPage ??= onFirstPage?.(page) ?? Promise.resolve());
    return page;
  };
  const codes: string[] = [];
  const ctx: RobotContext = {
    jobId: id,
    credentials: () => credentials,
    signal: controller.signal,
    openPage,
    withSecrets: (secrets, work) => session.withSecrets(secrets, work),
    progress: (step, percent) => console.progress(step, percent),
    markSubmitted: () => undefined,
    pageChecked: (check) => console.pageChecked(check),
    ...humanSteps(adapter.humanSteps, async (step) => {
      // What the person typed is a secret of the run: a recording replaces it by a placeholder.
      const answer = await console.askCode(terminalPrompt(step));
      codes.push(answer);
      return answer;
    }),
  };
  let result: TryOutcome['result'];
  try {
    result = { ok: true, value: await adapter.run(ctx, { produit: product.code, dicData: checked.data }) };
  } catch (err) {
    result =
      err instanceof RobotError
        ? { ok: false, code: err.code, message: session.redact(err.message), technical: err.kind === 'technical' }
        : {
            ok: false,
            code: 'robot_crashed',
            message: session.redact(`The robot stopped unexpectedly: ${String((err as Error)?.message ?? err).split('\n')[0]}`),
            technical: true,
          };
  }
  // A try keeps its trace and screenshot whatever the outcome, as a failed job does.
  const saved = await session.finish('failed');
  return {
    result,
    adapterVersion: adapter.version,
    artifacts: { dir: runtime.artifactsDir(id), trace: saved.trace, screenshot: saved.screenshot },
    secrets: { credentials, secretExtras: secretExtraFields(deps, input.code), codes },
  };
}

function credentialsFor(deps: Deps, cabinetId: string | undefined, code: string, demo: InsurerCredentials | undefined): InsurerCredentials {
  const cabinet = cabinetId === undefined ? undefined : readInsurerCredentials(deps, cabinetId, code);
  if (cabinet) return cabinet;
  if (demo) return demo;
  throw new ApiError(
    'insurer_credentials_missing',
    cabinetId === undefined
      ? `${code} needs a cabinet's portal credentials: name the cabinet whose credentials to use.`
      : `No portal credentials for ${code} in this cabinet: set them first.`,
  );
}
