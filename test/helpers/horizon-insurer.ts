import { join } from 'node:path';
import { readAdapterPackage, insurerFromPackage } from '../../server/insurers/package-loader.js';
import type { Insurer } from '../../server/insurers/registry.js';
import { packageRoot } from '../../server/paths.js';
import { createHorizonAdapter, type HorizonAdapterOptions } from '../../insurers/horizon/src/index.js';

/** The built-in Horizon Direct insurer as its package makes it (manifest and code), on a portal the test names. */
export function horizonInsurer(options: HorizonAdapterOptions): Insurer {
  const dir = join(packageRoot(), 'insurers', 'horizon');
  return insurerFromPackage(readAdapterPackage(dir), createHorizonAdapter(options), {
    source: 'built-in',
    dir,
    signer: null,
    sandboxUrl: () => options.portalUrl().replace(/\/+$/, ''),
  });
}
