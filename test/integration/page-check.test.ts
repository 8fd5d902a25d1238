// @module-tag browser
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPage, RobotError, type Page, type PageCheck } from '@courtier/adapter-kit';
import { createBrowserRuntime, type BrowserRuntime } from '../../server/robots/browser.js';
import { tempDir } from '../helpers/server.js';

/** The adapter kit's page check on what portals really show: names YAML quotes, and pages in frames. */
let runtime: BrowserRuntime;
let page: Page;
let finish: () => Promise<unknown>;

beforeAll(async () => {
  runtime = createBrowserRuntime({ dataDir: tempDir(), headed: false });
  const session = runtime.session('page-check', { secrets: [] });
  page = await session.openPage();
  finish = () => session.finish('abandoned');
}, 60_000);
afterAll(async () => {
  await finish?.();
  await runtime?.close();
});

const expectation = (landmarks: { role: string; name: string }[]) => ({ step: 'quote', path: /.*/, landmarks });

describe('expectPage', () => {
  it('reads names that hold ": " (quoted otherwise in the snapshot) and names with quotes', async () => {
    await page.setContent(`<h1>Devis : étape 2: véhicule</h1><button>L'assuré "principal"</button>`);
    await expectPage(
      page,
      expectation([
        { role: 'heading', name: 'Devis : étape 2: véhicule' },
        { role: 'button', name: `L'assuré "principal"` },
      ]),
      { timeoutMs: 2000 },
    );
  });

  it('checks a page inside a frame, and names the step when it changed', async () => {
    await page.setContent(`<iframe name="principal" srcdoc="<h1>Souscripteur</h1><label>Nom <input></label>"></iframe>`);
    await expect.poll(() => page.frame('principal')?.locator('h1').count() ?? 0).toBe(1);
    const frame = page.frame('principal')!;
    await expectPage(
      frame,
      expectation([
        { role: 'heading', name: 'Souscripteur' },
        { role: 'textbox', name: 'Nom' },
      ]),
      { timeoutMs: 2000 },
    );
    const changed = await expectPage(frame, expectation([{ role: 'heading', name: 'Risque' }]), { timeoutMs: 600 }).catch(
      (err: unknown) => err,
    );
    expect(changed).toBeInstanceOf(RobotError);
    expect(changed).toMatchObject({ code: 'portal_changed', details: { step: 'quote' } });
  });

  it("tells the robot's context of the page each step found, and stops at once when its job is cancelled", async () => {
    await page.setContent(`<h1>Connexion</h1><label>Identifiant <input value="jdupont"></label><p>Bienvenue</p>`);
    const checks: PageCheck[] = [];
    const controller = new AbortController();
    const ctx = { signal: controller.signal, pageChecked: (check: PageCheck) => checks.push(check) };
    await expectPage(page, { step: 'login', landmarks: [{ role: 'heading', name: 'Connexion' }] }, { timeoutMs: 2000, ctx });
    expect(checks).toEqual([
      {
        step: 'login',
        path: expect.any(String) as string,
        landmarks: ['heading "Connexion"', 'textbox "Identifiant"'],
        snapshot: expect.stringContaining('- heading "Connexion" [level=1]') as string,
      },
    ]);
    expect(checks[0]?.snapshot).toContain('Bienvenue');

    // A failed check tells nothing; a cancelled job stops the wait with `cancelled`.
    controller.abort();
    const cancelled = await expectPage(page, expectation([{ role: 'heading', name: 'Ailleurs' }]), { timeoutMs: 2000, ctx }).catch(
      (err: unknown) => err,
    );
    expect(cancelled).toMatchObject({ code: 'cancelled' });
    expect(checks).toHaveLength(1);
  });
});
