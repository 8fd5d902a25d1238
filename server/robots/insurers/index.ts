import type { InsurerAdapter } from '../adapter.js';
import { createSandboxAdapter } from './sandbox/index.js';

export interface BuiltInInsurerOptions {
  /**
   * The sandbox portal's base URL (e.g. http://127.0.0.1:8787/sandbox/insurer), when this service
   * serves it (COURTIER_SANDBOX): the sandbox adapter is offered only then.
   */
  portalUrl?: () => string;
}

/**
 * The insurers built into this install. Each adapter lives in its own folder here; see README.md
 * beside this file for how to write one.
 */
export function builtInInsurers(options: BuiltInInsurerOptions = {}): InsurerAdapter[] {
  const { portalUrl } = options;
  return portalUrl ? [createSandboxAdapter({ portalUrl })] : [];
}

/** Where this service answers on this machine, for its own robots to reach its sandbox portal. */
export function localPortalUrl(host: string, port: number): string {
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}/sandbox/insurer`;
}
