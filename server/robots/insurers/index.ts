import type { InsurerAdapter } from '../adapter.js';

/**
 * The insurers built into this install. Each adapter lives in its own folder here; see README.md
 * beside this file for how to write one. (The sandbox insurer's adapter comes with the robots.)
 */
export function builtInInsurers(): InsurerAdapter[] {
  return [];
}
