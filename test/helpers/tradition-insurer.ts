import { join } from 'node:path';
import { insurerFromPackage, readAdapterPackage } from '../../server/insurers/package-loader.js';
import type { Insurer } from '../../server/insurers/registry.js';
import { packageRoot } from '../../server/paths.js';
import { createTraditionAdapter, type TraditionAdapterOptions } from '../../insurers/tradition/src/index.js';

/** The built-in Mutuelle Tradition insurer as its package makes it, on a portal and with waits the test names. */
export function traditionInsurer(options: TraditionAdapterOptions): Insurer {
  const dir = join(packageRoot(), 'insurers', 'tradition');
  return insurerFromPackage(readAdapterPackage(dir), createTraditionAdapter(options), {
    source: 'built-in',
    dir,
    signer: null,
    sandboxUrl: () => options.portalUrl().replace(/\/+$/, ''),
  });
}
