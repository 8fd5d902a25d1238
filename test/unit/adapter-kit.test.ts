import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADAPTER_API_VERSION, adapterPackageSchema } from '@courtier/adapter-kit';
import { packageRoot } from '../../server/paths.js';

const packageJson = (path: string) =>
  JSON.parse(readFileSync(join(packageRoot(), path, 'package.json'), 'utf8')) as Record<string, unknown>;

describe('the adapter kit', () => {
  it('is the adapter API version it says it is', () => {
    expect(packageJson('packages/adapter-kit').version).toBe(ADAPTER_API_VERSION);
  });

  it('accepts the built-in sandbox insurer’s package.json as a manifest', () => {
    const parsed = adapterPackageSchema.parse(packageJson('insurers/sandbox'));
    expect(parsed.courtier).toMatchObject({ code: 'sandbox', name: 'Sandbox Assurances', sandbox: { path: '/sandbox/insurer' } });
    expect(parsed.courtier.products.map((p) => p.code)).toEqual(['auto', 'mrh', 'attestation']);
  });
});
