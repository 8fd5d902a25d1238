import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createInsurerRegistry, type Insurer } from '../../server/insurers/registry.js';

/** The insurers of an install: by code, and the demo insurer each test key's request runs on. */
const insurer = (code: string, demo: boolean, products = ['auto']): Insurer => ({
  code,
  name: code,
  version: '1.0.0',
  products: products.map((p) => ({ code: p, label: p, kind: 'quote' as const, schema: z.object({}), example: {} })),
  run: () => Promise.reject(new Error('not run here')),
  ...(demo ? { testKeys: { demoCredentials: { login: 'demo', password: 'demo', extra: {} } } } : {}),
});

describe('insurer registry', () => {
  it('finds the demo insurers by what they declare, not by their code', () => {
    const registry = createInsurerRegistry([insurer('axa', false), insurer('demo-assur', true)]);
    expect(registry.forTestKey({ compagnie: 'axa', produit: 'auto' })?.code).toBe('demo-assur');
    expect(registry.get('axa')?.code).toBe('axa');
    expect(createInsurerRegistry([insurer('axa', false)]).forTestKey({ compagnie: 'axa', produit: 'auto' })).toBeUndefined();
  });

  it('runs a test key on the demo insurer compagnie names, else on the first by code that offers the product', () => {
    const registry = createInsurerRegistry([
      insurer('zeta', true, ['auto', 'rc_pro']),
      insurer('beta', true, ['habitation']),
      insurer('alpha', true, ['voiture']),
    ]);
    expect(registry.forTestKey({ compagnie: 'zeta', produit: 'habitation' })?.code).toBe('zeta');
    expect(registry.forTestKey({ compagnie: 'axa', produit: 'habitation' })?.code).toBe('beta');
    expect(registry.forTestKey({ compagnie: 'axa', produit: 'rc_pro' })?.code).toBe('zeta');
    // No demo insurer offers it: the first one, whose catalogue then says what it offers.
    expect(registry.forTestKey({ compagnie: 'axa', produit: 'vie' })?.code).toBe('alpha');
  });
});
