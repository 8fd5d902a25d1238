import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// Each test file gets a runtime folder of its own, so that the services its tests start (and a
// Courtier the developer runs meanwhile) never show up in another file's `courtier` commands.
const runtimeDir = mkdtempSync(join(tmpdir(), 'courtier-test-runtime-'));
process.env.XDG_RUNTIME_DIR = runtimeDir;
afterAll(() => rmSync(runtimeDir, { recursive: true, force: true }));
