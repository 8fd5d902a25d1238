import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * axe-core over a page of the console in real Chromium. The console's CSP refuses injected <script>
 * tags, so axe's source is evaluated through the DevTools protocol, which the CSP does not govern.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** The impacts that fail a test; moderate and minor ones are only counted. */
const FAILING = new Set(['serious', 'critical']);
const TARGETS_SHOWN = 4;

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  helpUrl: string;
  nodes: { target: unknown[] }[];
}

/** Runs axe-core over the page as it is now; returns the serious and critical violations, worded. */
export async function audit(page: Page, name: string): Promise<string[]> {
  // The root tsconfig has no DOM types: the page's globals are reached through globalThis.
  const loaded = await page.evaluate(() => 'axe' in globalThis);
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(() => {
    const g = globalThis as unknown as {
      document: unknown;
      axe: { run(context: unknown, options: object): Promise<{ violations: unknown[] }> };
    };
    return g.axe.run(g.document, { resultTypes: ['violations'] }).then((r) => r.violations);
  });
  const found = violations as AxeViolation[];
  const minor = found.filter((v) => !FAILING.has(v.impact ?? ''));
  if (minor.length > 0) console.info(`[axe] ${name}: ${minor.map((v) => `${v.id} (${v.impact ?? '?'})`).join(', ')}`);
  return found
    .filter((v) => FAILING.has(v.impact ?? ''))
    .map((v) => {
      const targets = v.nodes.slice(0, TARGETS_SHOWN).map((n) => n.target.map(String).join(' >> '));
      const more = v.nodes.length > TARGETS_SHOWN ? ` (+${v.nodes.length - TARGETS_SHOWN} more)` : '';
      return `${name}: ${v.id} (${v.impact ?? '?'}) ${v.help} — ${targets.join(' | ')}${more}`;
    });
}
