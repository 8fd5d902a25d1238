import type { Frame, Page } from 'playwright-core';
import { RobotError, type RobotContext } from './adapter.js';

/** An element a person would see on a page: its ARIA role and accessible name. */
export interface PageLandmark {
  role: string;
  name: string;
}

/**
 * What a step expects of the page it acts on, declared in the page object: the URL's path and the
 * landmarks that make the page the one the robot was written for (its heading, the fields and
 * buttons it uses). A redesign that renames or moves one of them fails the step as
 * `portal_changed` before the robot types anything.
 */
export interface PageExpectation {
  /** The step's name: in the error's message and as `details.step`. */
  step: string;
  /** The URL's path must match (the origin is the portal's; the query string is not compared). */
  path?: RegExp;
  landmarks: readonly PageLandmark[];
}

/** What a portal_changed error carries in `details`: no value typed in a field, no text of the page. */
export type PortalChangedDetails = {
  step: string;
  expected: { path: string | null; landmarks: string[] };
  found: { path: string; landmarks: string[] };
  missing: string[];
};

/**
 * A step's page as expectPage found it, told to the context's pageChecked: its landmarks are the
 * step's fingerprint, its snapshot (Playwright's ARIA snapshot, as YAML) what a recording saves.
 */
export interface PageCheck {
  step: string;
  /** The URL's path (no query string). */
  path: string;
  landmarks: string[];
  snapshot: string;
}

/** The roles whose names identify a page; text, values and list items (where data shows) are left out. */
const LANDMARK_ROLES = new Set([
  'heading',
  'button',
  'link',
  'textbox',
  'combobox',
  'listbox',
  'radio',
  'checkbox',
  'spinbutton',
  'tab',
  'menuitem',
  'navigation',
  'form',
  'dialog',
  'alert',
  'img',
]);

const describeLandmark = (landmark: PageLandmark) => `${landmark.role} "${landmark.name}"`;

/** Long digit runs (a policy, a phone, an amount) are masked: a snapshot goes into a job artifact. */
const maskNumbers = (text: string) => text.replace(/\d{3,}/g, (digits) => '#'.repeat(digits.length));

/**
 * The landmarks of an ARIA snapshot (Playwright's YAML: `- heading "Accueil" [level=1]`), each
 * once, in order.
 */
function snapshotLandmarks(snapshot: string): PageLandmark[] {
  const seen = new Set<string>();
  const landmarks: PageLandmark[] = [];
  for (const line of snapshot.split('\n')) {
    // YAML quotes the whole entry when its name holds ": " (- 'heading "Devis : auto" [level=1]').
    const quoted = /^(\s*- )'(.*)'\s*$/.exec(line);
    const entry = quoted ? `${quoted[1]!}${quoted[2]!.replace(/''/g, "'")}` : line;
    const match = /^\s*- ([a-z]+) "((?:[^"\\]|\\.)*)"/.exec(entry);
    if (!match || !LANDMARK_ROLES.has(match[1]!)) continue;
    const landmark = { role: match[1]!, name: match[2]!.replace(/\\(.)/g, '$1') };
    const key = describeLandmark(landmark);
    if (seen.has(key)) continue;
    seen.add(key);
    landmarks.push(landmark);
  }
  return landmarks;
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/**
 * Checks that the page is the one the step expects, waiting up to `timeoutMs` for it to render
 * (a single-page app draws after the load). Throws RobotError technical `portal_changed`, naming the
 * step and what is missing, with PortalChangedDetails; `cancelled` when the signal aborts first.
 * Give it the robot's context (`ctx`): its signal cancels the wait, and a recording is told of the
 * page found (ctx.pageChecked), so that the cassette keeps a snapshot of each step.
 */
export async function expectPage(
  page: Page | Frame,
  expected: PageExpectation,
  options: { timeoutMs?: number; signal?: AbortSignal; ctx?: Pick<RobotContext, 'signal' | 'pageChecked'> } = {},
): Promise<void> {
  const { timeoutMs = 3_000, ctx } = options;
  const signal = options.signal ?? ctx?.signal;
  const deadline = Date.now() + timeoutMs;
  let snapshot = '';
  let found: PageLandmark[] = [];
  let missing: PageLandmark[] = [];
  let pathMatches = false;
  for (;;) {
    if (signal?.aborted) throw new RobotError('technical', 'cancelled', 'The job was cancelled.');
    pathMatches = !expected.path || expected.path.test(pathOf(page.url()));
    try {
      snapshot = await page.locator('body').ariaSnapshot({ timeout: Math.max(500, deadline - Date.now()) });
    } catch {
      snapshot = '';
    }
    found = snapshotLandmarks(snapshot);
    const present = new Set(found.map(describeLandmark));
    missing = expected.landmarks.filter((landmark) => !present.has(describeLandmark(landmark)));
    if (pathMatches && missing.length === 0) {
      ctx?.pageChecked?.({ step: expected.step, path: pathOf(page.url()), landmarks: found.map(describeLandmark), snapshot });
      return;
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const details: PortalChangedDetails = {
    step: expected.step,
    expected: { path: expected.path ? String(expected.path) : null, landmarks: expected.landmarks.map(describeLandmark) },
    found: { path: maskNumbers(pathOf(page.url())), landmarks: found.map((l) => maskNumbers(describeLandmark(l))) },
    missing: [...(pathMatches ? [] : [`the address ${String(expected.path)}`]), ...missing.map(describeLandmark)],
  };
  throw new RobotError(
    'technical',
    'portal_changed',
    `The insurer's portal changed at the step "${expected.step}": ${details.missing.slice(0, 3).join(', ')}${details.missing.length > 3 ? '…' : ''} not found.`,
    details,
  );
}
