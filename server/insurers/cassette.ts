import type { Page, Request, Route } from 'playwright-core';
import { z } from 'zod';
import type { InsurerCredentials, PageCheck, RobotResult } from '@courtier/adapter-kit';
import { redirectNavigation } from '../platform/navigation-redirect.js';
import { allowListOf, isAllowed, type Reach } from '../robots/reach.js';

/**
 * A cassette: one run of an insurer's robot against its portal, saved to be replayed offline. The
 * portal's answers in the order they came, the page each step found, and what the run gave. Secrets,
 * the codes typed and the dicData's free text (names, addresses) are replaced by placeholders.
 */
const exchangeSchema = z.strictObject({
  method: z.string(),
  origin: z.string(),
  /** The URL's path and query. */
  path: z.string(),
  status: z.int(),
  headers: z.record(z.string(), z.string()),
  body: z.strictObject({ encoding: z.enum(['utf8', 'base64']), text: z.string() }),
});
type Exchange = z.infer<typeof exchangeSchema>;

/** A step's page as the robot found it: the fingerprint its replays must find again, and the whole snapshot to read. */
const stepSchema = z.strictObject({
  step: z.string(),
  path: z.string(),
  /** The page's landmarks (`heading "Connexion"`), in order. */
  landmarks: z.array(z.string()),
  /** Playwright's ARIA snapshot of the page (YAML). */
  snapshot: z.string(),
});

export const cassetteSchema = z.strictObject({
  format: z.literal(1),
  insurer: z.string(),
  adapter_version: z.string(),
  produit: z.string(),
  recorded_at: z.string(),
  /** The portal's origin when it was recorded (its first request's): a demo insurer's portal is replayed there. */
  origin: z.string(),
  dicData: z.record(z.string(), z.unknown()),
  /** How many codes the robot asked for. */
  codes: z.int().min(0),
  exchanges: z.array(exchangeSchema),
  /** Each step the robot checked its page at, in order; absent from a cassette written by hand. */
  steps: z.array(stepSchema).optional(),
  result: z.strictObject({
    tarif_eur: z.number(),
    outcome: z.enum(['complete', 'partial']),
    suspens: z.string().nullable(),
    pdf: z.boolean(),
    /** The formulas offered, by code and annual premium; absent when the portal showed none. */
    offres: z.array(z.strictObject({ formule: z.string(), prime_annuelle_eur: z.number() })).optional(),
    /** The kinds of the other documents, in order; absent when there were none. */
    documents: z.array(z.string()).optional(),
  }),
});
export type Cassette = z.infer<typeof cassetteSchema>;

/** The credentials a replay logs in with: the placeholders the recording wrote. */
export const REPLAY_CREDENTIALS: InsurerCredentials = { login: '{{login}}', password: '{{password}}', extra: {} };

/** The headers a replay needs; the others (dates, servers, caching) are left out of the cassette. */
const KEPT_HEADERS = new Set(['content-type', 'location', 'set-cookie', 'content-disposition']);
const TEXT_TYPES = /^(text\/|application\/(json|javascript|xml|x-www-form-urlencoded))/;

/** Replaces each secret (and its URL-encoded form) by its placeholder. */
function scrub(text: string, secrets: ReadonlyMap<string, string>): string {
  let scrubbed = text;
  for (const [value, placeholder] of secrets) {
    if (value.length < 3) continue;
    for (const form of new Set([value, encodeURIComponent(value), encodeURIComponent(value).replace(/%20/g, '+')])) {
      scrubbed = scrubbed.split(form).join(placeholder);
    }
  }
  return scrubbed;
}

/** The secrets of a recording by their placeholders: the password, secret extra fields, the login, the codes typed. */
export function recordingSecrets(
  credentials: InsurerCredentials,
  secretExtras: readonly string[],
  codes: readonly string[],
): Map<string, string> {
  const secrets = new Map<string, string>([
    [credentials.password, '{{password}}'],
    [credentials.login, '{{login}}'],
  ]);
  for (const field of secretExtras) {
    const value = credentials.extra[field];
    if (value !== undefined) secrets.set(value, `{{extra.${field}}}`);
  }
  codes.forEach((code, index) => secrets.set(code, `{{code.${index + 1}}}`));
  return secrets;
}

/**
 * The free-text values of a recording's dicData (names, addresses: a string field with no enum,
 * pattern or format in the product's JSON Schema), each replaced by as many x, in the dicData the
 * cassette keeps and, as secrets are, wherever the exchanges echo them. Same length: the replay's
 * dicData still passes the product's schema. Codes, dates and amounts are kept (replays need them).
 */
export function personalData(
  productSchema: Record<string, unknown>,
  dicData: Record<string, unknown>,
): { dicData: Record<string, unknown>; replacements: Map<string, string> } {
  const properties = (productSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const replacements = new Map<string, string>();
  const kept: Record<string, unknown> = { ...dicData };
  for (const [key, value] of Object.entries(dicData)) {
    const field = properties[key];
    const freeText = field?.type === 'string' && !field.enum && !field.pattern && !field.format && !field.const;
    if (!freeText || typeof value !== 'string' || value.trim().length < 3) continue;
    const replacement = 'x'.repeat(value.length);
    replacements.set(value, replacement);
    kept[key] = replacement;
  }
  return { dicData: kept, replacements };
}

/** The steps of a recording as a cassette keeps them: secrets and personal data replaced, as in the exchanges. */
export function recordedSteps(checks: readonly PageCheck[], secrets: ReadonlyMap<string, string>): NonNullable<Cassette['steps']> {
  return checks.map((check) => ({
    step: check.step,
    path: scrub(check.path, secrets),
    landmarks: check.landmarks.map((landmark) => scrub(landmark, secrets)),
    snapshot: scrub(check.snapshot, secrets),
  }));
}

/**
 * How a replay's steps differ from the recorded ones: another sequence of steps, or a step whose
 * page shows other landmarks (the robot's page objects or the portal's code drifted from the
 * recording). Empty when the cassette has no steps.
 */
export function compareSteps(cassette: Cassette, checks: readonly PageCheck[]): string[] {
  const recorded = cassette.steps;
  if (!recorded) return [];
  const names = (steps: readonly { step: string }[]) => steps.map((s) => s.step).join(' → ');
  if (names(checks) !== names(recorded)) return [`steps ${names(checks) || '(none)'} instead of ${names(recorded)}`];
  const differences: string[] = [];
  recorded.forEach((step, index) => {
    const found = new Set(checks[index]!.landmarks);
    const expected = new Set(step.landmarks);
    const missing = step.landmarks.filter((l) => !found.has(l));
    const added = checks[index]!.landmarks.filter((l) => !expected.has(l));
    if (missing.length + added.length === 0) return;
    const list = (items: string[]) => `${items.slice(0, 3).join(', ')}${items.length > 3 ? '…' : ''}`;
    differences.push(
      `step "${step.step}": ${[missing.length ? `no ${list(missing)}` : '', added.length ? `${list(added)} not recorded` : ''].filter(Boolean).join('; ')}`,
    );
  });
  return differences;
}

/**
 * Records every exchange of the page's context within the insurer's reach, in order, as they are
 * answered (redirects one by one: the browser follows them). Call `exchanges(secrets)` at the end.
 */
export async function startRecording(
  page: Page,
  reach: Reach,
): Promise<{ origin(): string | undefined; exchanges(secrets: ReadonlyMap<string, string>): Promise<Exchange[]> }> {
  const allowed = allowListOf(reach);
  // Watched as events: a redirect's next request is seen too (routes do not see it).
  const raw: { request: Request; origin: string; path: string; answer?: Promise<Omit<Exchange, 'method' | 'origin' | 'path'> | null> }[] =
    [];
  const context = page.context();
  context.on('request', (request) => {
    if (!isAllowed(request.url(), allowed)) return;
    const url = new URL(request.url());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return;
    raw.push({ request, origin: url.origin, path: url.pathname + url.search });
  });
  // Routed requests are fetched here, so that a download's body (which the browser keeps to itself)
  // is known; by request, as a URL may be asked many times (a redirect's next request is not routed).
  const routedBodies = new WeakMap<Request, Buffer>();
  const answered = async (request: Request) => {
    const entry = raw.find((e) => e.request === request);
    if (!entry) return;
    entry.answer = (async () => {
      const response = await request.response();
      if (!response) return null;
      const headers: Record<string, string> = {};
      for (const { name, value } of await response.headersArray()) {
        const key = name.toLowerCase();
        if (KEPT_HEADERS.has(key)) headers[key] = key in headers ? `${headers[key]}\n${value}` : value;
      }
      // A redirect has no body to read.
      const body =
        routedBodies.get(request) ??
        (response.status() >= 300 && response.status() < 400 ? Buffer.alloc(0) : await response.body().catch(() => Buffer.alloc(0)));
      const text = TEXT_TYPES.test(headers['content-type'] ?? '');
      return {
        status: response.status(),
        headers,
        body: text
          ? { encoding: 'utf8' as const, text: body.toString('utf8') }
          : { encoding: 'base64' as const, text: body.toString('base64') },
      };
    })();
  };
  await context.route('**/*', async (route: Route, request: Request) => {
    if (!isAllowed(request.url(), allowed)) return route.fallback();
    const response = await route.fetch({ maxRedirects: 0 });
    routedBodies.set(request, await response.body());
    await route.fulfill({ response });
  });
  context.on('requestfinished', (request) => void answered(request));
  context.on('requestfailed', (request) => void answered(request));
  return {
    origin: () => raw[0]?.origin,
    async exchanges(secrets) {
      const done: Exchange[] = [];
      for (const entry of raw) {
        const answer = await entry.answer;
        if (!answer) continue;
        done.push({
          method: entry.request.method(),
          origin: entry.origin,
          path: scrub(entry.path, secrets),
          status: answer.status,
          headers: Object.fromEntries(Object.entries(answer.headers).map(([k, v]) => [k, scrub(v, secrets)])),
          body: answer.body.encoding === 'utf8' ? { encoding: 'utf8', text: scrub(answer.body.text, secrets) } : answer.body,
        });
      }
      return done;
    },
  };
}

/** What a replay found wrong: a request the cassette does not hold, or one it holds and was never made. */
export interface ReplayProblems {
  unexpected: string[];
}

/**
 * Serves the cassette's exchanges to the page's context, offline: each request gets the first
 * exchange not yet served with its method and path (a wizard that posts to one URL many times gets
 * its answers in the recorded order); the query string's and the body's values are not compared
 * (tokens, timestamps, view state). A request the cassette does not hold is aborted and noted.
 */
export async function startReplay(page: Page, cassette: Cassette): Promise<ReplayProblems> {
  const served = new Set<number>();
  const problems: ReplayProblems = { unexpected: [] };
  const pathOnly = (path: string) => path.split('?')[0];
  await page.context().route('**/*', async (route: Route, request: Request) => {
    const url = new URL(request.url());
    if (url.protocol === 'data:' || url.protocol === 'blob:') return route.fallback();
    const path = url.pathname;
    const index = cassette.exchanges.findIndex(
      (exchange, i) =>
        !served.has(i) && exchange.method === request.method() && exchange.origin === url.origin && pathOnly(exchange.path) === path,
    );
    const exchange = index >= 0 ? cassette.exchanges[index] : undefined;
    if (!exchange) {
      problems.unexpected.push(`${request.method()} ${url.origin}${path}`);
      return route.abort('blockedbyclient');
    }
    served.add(index);
    const location = exchange.headers.location;
    if (exchange.status >= 300 && exchange.status < 400 && location !== undefined && request.isNavigationRequest()) {
      return redirectNavigation(route, new URL(location, url).href);
    }
    const headers = { ...exchange.headers };
    const body = exchange.body.encoding === 'utf8' ? Buffer.from(exchange.body.text, 'utf8') : Buffer.from(exchange.body.text, 'base64');
    await route.fulfill({ status: exchange.status, headers, body });
  });
  return problems;
}

/** What a cassette keeps of a result's offers and documents: enough to see a mapping or a parser drift. */
function resultShape(result: RobotResult): Pick<Cassette['result'], 'offres' | 'documents'> {
  return {
    ...(result.offres?.length
      ? { offres: result.offres.map((o) => ({ formule: o.formule, prime_annuelle_eur: o.prime_annuelle_eur })) }
      : {}),
    ...(result.documents?.length ? { documents: result.documents.map((d) => d.kind) } : {}),
  };
}

/** What a cassette keeps of the run's result, to compare its replays with. */
export function cassetteResult(result: RobotResult): Cassette['result'] {
  return {
    tarif_eur: result.tarif_eur,
    outcome: result.outcome,
    suspens: result.suspens ?? null,
    pdf: Boolean(result.pdf),
    ...resultShape(result),
  };
}

/** How the replayed run differs from the recorded one; empty when it gave the same. */
export function compareResult(cassette: Cassette, result: RobotResult): string[] {
  const expected = cassette.result;
  const shape = resultShape(result);
  const differences: string[] = [];
  if (result.tarif_eur !== expected.tarif_eur) differences.push(`premium ${result.tarif_eur} € instead of ${expected.tarif_eur} €`);
  if (result.outcome !== expected.outcome) differences.push(`outcome ${result.outcome} instead of ${expected.outcome}`);
  if ((result.suspens ?? null) !== expected.suspens)
    differences.push(`suspens ${JSON.stringify(result.suspens ?? null)} instead of ${JSON.stringify(expected.suspens)}`);
  if (Boolean(result.pdf) !== expected.pdf) differences.push(expected.pdf ? 'no PDF' : 'a PDF the recording did not have');
  if (result.pdf && result.pdf.subarray(0, 5).toString() !== '%PDF-') differences.push('a PDF that is not one');
  if (JSON.stringify(shape.offres ?? []) !== JSON.stringify(expected.offres ?? []))
    differences.push(`offers ${JSON.stringify(shape.offres ?? [])} instead of ${JSON.stringify(expected.offres ?? [])}`);
  if (JSON.stringify(shape.documents ?? []) !== JSON.stringify(expected.documents ?? []))
    differences.push(`documents ${JSON.stringify(shape.documents ?? [])} instead of ${JSON.stringify(expected.documents ?? [])}`);
  for (const doc of result.documents ?? [])
    if (doc.pdf.subarray(0, 5).toString() !== '%PDF-') differences.push(`a document (${doc.label}) that is not a PDF`);
  return differences;
}
