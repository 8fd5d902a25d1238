import { join } from 'node:path';
import { readAdapterPackage, insurerFromPackage } from '../../server/insurers/package-loader.js';
import type { Insurer } from '../../server/insurers/registry.js';
import { packageRoot } from '../../server/paths.js';
import { createSandboxAdapter, type SandboxAdapterOptions } from '../../insurers/sandbox/src/index.js';

/**
 * The built-in sandbox insurer as its package makes it (manifest and code), on a portal the test
 * names, with the timeouts it wants (tests fail fast).
 */
export function sandboxInsurer(options: SandboxAdapterOptions): Insurer {
  const dir = join(packageRoot(), 'insurers', 'sandbox');
  return insurerFromPackage(readAdapterPackage(dir), createSandboxAdapter(options), {
    source: 'built-in',
    dir,
    signer: null,
    sandboxUrl: () => options.portalUrl().replace(/\/+$/, ''),
  });
}
