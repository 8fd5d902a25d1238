import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createInsurerRegistry, type Insurer } from '../../server/insurers/registry.js';

/** The insurers of an install: by code, and the one demo insurer test keys price with. */
const insurer = (code: string, demo: boolean): Insurer => ({
  code,
  name: code,
  version: '1.0.0',
  products: [{ code: 'auto', label: 'Auto', kind: 'quote', schema: z.object({}), example: {} }],
  run: () => Promise.reject(new Error('not run here')),
  ...(demo ? { testKeys: { demoCredentials: { login: 'demo', password: 'demo', extra: {} } } } : {}),
});

describe('insurer registry', () => {
  it('finds the insurer test keys price with by what it declares, not by its code', () => {
    const registry = createInsurerRegistry([insurer('axa', false), insurer('demo-assur', true)]);
    expect(registry.forTestKeys()?.code).toBe('demo-assur');
    expect(registry.get('axa')?.code).toBe('axa');
    expect(createInsurerRegistry([insurer('axa', false)]).forTestKeys()).toBeUndefined();
  });

  it('refuses two demo insurers: a test key would not know which one prices', () => {
    expect(() => createInsurerRegistry([insurer('one', true), insurer('two', true)])).toThrow(/one and two both do/);
  });
});
