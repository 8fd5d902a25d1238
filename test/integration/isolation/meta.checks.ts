/**
 * The key's own cabinet (GET /me, tag Keys) and the documents every caller gets alike (tag Meta: the OpenAPI document, the docs page).
 * One check per operationId, run by meta.test.ts; test/helpers/isolation.ts holds the two cabinets.
 */
import { expect } from 'vitest';
import { getMe, meResponseSchema } from '../../../shared/api-keys.js';
import { getApiDocs, getOpenApiDocument } from '../../../shared/meta.js';
import { aIds, B, cabinetA, cabinetB, call, keyA, keyB, type IsolationCheck } from '../../helpers/isolation.js';

export const META_CHECKS: Record<string, IsolationCheck> = {
  [getMe.operationId]: {
    title: "B's key reports B's cabinet, A's key A's",
    async run() {
      const b = meResponseSchema.parse((await call(keyB.key, getMe)).body);
      expect(b).toMatchObject({ cabinet_id: cabinetB, key_id: keyB.key_id });
      const a = meResponseSchema.parse((await call(keyA.key, getMe)).body);
      expect(a).toMatchObject({ cabinet_id: cabinetA, key_id: keyA.key_id });
    },
  },

  [getOpenApiDocument.operationId]: {
    title: 'the OpenAPI document is the same for A, B and no key, and holds no tenant data',
    async run() {
      const texts = await Promise.all([keyA.key, keyB.key, null].map(async (key) => (await call(key, getOpenApiDocument)).text));
      expect(texts[1]).toBe(texts[0]);
      expect(texts[2]).toBe(texts[0]);
      for (const id of [cabinetA, cabinetB, ...aIds(), ...Object.values(B)]) expect(texts[0]).not.toContain(id);
    },
  },

  [getApiDocs.operationId]: {
    title: 'the docs page is the same for A, B and no key, and holds no tenant data',
    async run() {
      const results = await Promise.all([keyA.key, keyB.key, null].map((key) => call(key, getApiDocs)));
      for (const res of results) expect(res.status).toBe(200);
      expect(results[1]?.text).toBe(results[0]?.text);
      expect(results[2]?.text).toBe(results[0]?.text);
      for (const id of [cabinetA, cabinetB, ...aIds(), ...Object.values(B)]) expect(results[0]?.text).not.toContain(id);
    },
  },
};
