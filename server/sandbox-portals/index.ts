import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { SandboxMode, SandboxPortalOptions } from './modes.js';
import { horizonPortalPlugin } from './horizon/index.js';
import { sandboxPortalPlugin } from './sandbox/index.js';
import { traditionPortalPlugin } from './tradition/index.js';

export type { SandboxMode, SandboxPortalOptions } from './modes.js';

/**
 * The demo insurers' portals the service serves while its sandbox is on: stand-ins for insurers'
 * web sites, each of another style, each mounted at the path its insurer's package declares
 * (`courtier.sandbox.path`; a test checks that they agree). Each is an encapsulated plugin holding
 * all its state: nothing is shared between portals, nor with the rest of the service.
 */
export const SANDBOX_PORTALS: readonly { code: string; prefix: string; plugin: FastifyPluginAsync<SandboxPortalOptions> }[] = [
  { code: 'sandbox', prefix: '/sandbox/insurer', plugin: sandboxPortalPlugin },
  { code: 'horizon', prefix: '/sandbox/horizon', plugin: horizonPortalPlugin },
  { code: 'tradition', prefix: '/sandbox/tradition', plugin: traditionPortalPlugin },
];

/** Mounts every demo portal; `mode` is asked with each portal's insurer code (a test may take one portal down). */
export async function sandboxPortalsPlugin(
  app: FastifyInstance,
  options: Omit<SandboxPortalOptions, 'mode'> & { mode: (insurer: string) => SandboxMode },
): Promise<void> {
  for (const portal of SANDBOX_PORTALS)
    await app.register(portal.plugin, { ...options, mode: () => options.mode(portal.code), prefix: portal.prefix });
}
