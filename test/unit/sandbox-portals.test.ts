import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAdapterPackage } from '../../server/insurers/package-loader.js';
import { packageRoot } from '../../server/paths.js';
import { SANDBOX_PORTALS } from '../../server/sandbox-portals/index.js';

/** Every demo insurer's robot reaches its portal at the path its manifest declares: the service serves it there. */
describe('demo portals', () => {
  it('are served at the paths the built-in insurers declare, one portal per demo insurer', () => {
    const root = join(packageRoot(), 'insurers');
    const declared = readdirSync(root)
      .filter((name) => existsSync(join(root, name, 'package.json')))
      .map((name) => readAdapterPackage(join(root, name)).courtier)
      .filter((manifest) => manifest.sandbox !== undefined)
      .map((manifest) => ({ code: manifest.code, prefix: manifest.sandbox!.path }));
    expect(declared.length).toBeGreaterThan(0);
    expect(SANDBOX_PORTALS.map(({ code, prefix }) => ({ code, prefix }))).toEqual(
      expect.arrayContaining(declared.map((d) => expect.objectContaining(d))),
    );
    expect(SANDBOX_PORTALS).toHaveLength(declared.length);
  });
});
