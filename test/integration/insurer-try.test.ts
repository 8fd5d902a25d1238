// @module-tag browser
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCourtier, startServeProcess, stopChild } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { SANDBOX_PRODUCTS } from '../../insurers/sandbox/src/products.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

const autoExample = SANDBOX_PRODUCTS.find((p) => p.code === 'auto')!.example;

function setUp(name: string): { dataDir: string; data: string } {
  const dataDir = join(root, name);
  mkdirSync(dataDir, { recursive: true });
  const data = join(root, `${name}.json`);
  writeFileSync(data, JSON.stringify(autoExample));
  return { dataDir, data };
}

const tryArgs = (dataDir: string, data: string) => [
  'insurers',
  'try',
  'sandbox',
  '--product',
  'auto',
  '--data',
  data,
  '--data-dir',
  dataDir,
  '--json',
];

describe('courtier insurers try', () => {
  it('runs the sandbox robot once against the running service’s portal, with progress, its PDF and its trace', async () => {
    const { dataDir, data } = setUp('ok');
    const serve = await startServeProcess(['--data-dir', dataDir], { COURTIER_SANDBOX: '1' });
    try {
      const run = await runCourtier(tryArgs(dataDir, data));
      expect(run.code, run.stderr).toBe(0);
      const summary = JSON.parse(run.stdout) as { ok: boolean; tarif_eur: number; outcome: string; pdf: string; trace: string };
      expect(summary).toMatchObject({ ok: true, outcome: 'complete' });
      expect(summary.tarif_eur).toBeGreaterThan(0);
      expect(readFileSync(summary.pdf).subarray(0, 5).toString()).toBe('%PDF-');
      expect(existsSync(summary.trace)).toBe(true);
      expect(run.stderr).toMatch(/ 25 % {2}opening the auto quote\n/);
      expect(run.stderr).not.toMatch(/blocked:/);
    } finally {
      await stopChild(serve.child);
    }
  });

  it('says what failed, keeps the trace, and exits 1: the portal’s redesign is portal_changed at the driver step', async () => {
    const { dataDir, data } = setUp('changed');
    const serve = await startServeProcess(['--data-dir', dataDir], { COURTIER_SANDBOX: '1', COURTIER_SANDBOX_MODE: 'changed' });
    try {
      const run = await runCourtier(tryArgs(dataDir, data));
      expect(run.code).toBe(1);
      const summary = JSON.parse(run.stdout) as { ok: boolean; error: { code: string; message: string }; trace: string | null };
      expect(summary.ok).toBe(false);
      expect(summary.error.code).toBe('portal_changed');
      expect(summary.error.message).toMatch(/at the step "driver"/);
      expect(summary.trace && existsSync(summary.trace)).toBe(true);
    } finally {
      await stopChild(serve.child);
    }
  });

  it('refuses data that does not fit the product, and says a demo insurer needs the service running', async () => {
    const { dataDir, data } = setUp('refused');
    const serve = await startServeProcess(['--data-dir', dataDir], { COURTIER_SANDBOX: '1' });
    try {
      writeFileSync(data, JSON.stringify({ ...autoExample, bonus_malus: 9 }));
      const bad = await runCourtier(tryArgs(dataDir, data));
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ error: 'validation_error' });
    } finally {
      await stopChild(serve.child);
    }
    const stopped = await runCourtier(tryArgs(dataDir, data));
    expect(stopped.code).toBe(1);
    expect(JSON.parse(stopped.stdout).message).toMatch(/needs the Courtier service running on this data dir/);
  });
});
