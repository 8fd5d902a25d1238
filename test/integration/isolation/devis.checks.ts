/**
 * The quotes (tag Quotes, server/devis): creation with references, lists, reads, signature and PDFs.
 * One check per operationId, run by devis.test.ts; test/helpers/isolation.ts holds the two cabinets.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { createDevis, devisSchema, downloadDevisPdf, getDevis, getDevisPdf, listDevis, signDevis } from '../../../shared/devis.js';
import { downloadDevisDocument, getDevisDocument } from '../../../shared/devis-documents.js';
import { expectError } from '../../helpers/api.js';
import {
  A,
  B,
  cabinetA,
  cabinetB,
  cabinetRowCounts,
  call,
  count,
  expectCreated,
  expectCursorRefusedForB,
  expectNotFoundForB,
  expectOnlyB,
  fetchPath,
  keyA,
  keyB,
  listAs,
  row,
  server,
  type IsolationCheck,
} from '../../helpers/isolation.js';

export const DEVIS_CHECKS: Record<string, IsolationCheck> = {
  [createDevis.operationId]: {
    title: "B's POST /devis referencing A's client or opportunity is 400 validation_error and writes nothing",
    async run() {
      const before = cabinetRowCounts(cabinetB);
      const totalDevis = count('SELECT count(*) AS n FROM devis');
      const attempts: { body: Record<string, unknown>; path: string }[] = [
        { body: { client_id: A.personClient, compagnie: 'sandbox', produit: 'auto' }, path: 'body.client_id' },
        {
          body: { client_id: A.companyClient, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' },
          path: 'body.client_id',
        },
        {
          body: { client_id: B.client, opportunity_id: A.qualifiedOpportunity, compagnie: 'sandbox', produit: 'auto' },
          path: 'body.opportunity_id',
        },
      ];
      for (const { body, path } of attempts) {
        const variants: Record<string, string>[] = [{}, { 'Idempotency-Key': randomUUID() }];
        for (const headers of variants) {
          const res = await call(keyB.key, createDevis, { body, headers });
          const error = expectError(res, 400, 'validation_error');
          expect(error.details).toEqual([{ path, message: expect.stringContaining('in this cabinet') as string }]);
        }
      }
      expect(cabinetRowCounts(cabinetB)).toEqual(before); // no devis, and no idempotency claim left behind
      expect(count('SELECT count(*) AS n FROM devis')).toBe(totalDevis);
      const crossRefs = count(
        `SELECT count(*) AS n FROM devis WHERE cabinet_id = ? AND (client_id IN (?, ?) OR opportunity_id IN (?, ?))`,
        cabinetB,
        A.personClient,
        A.companyClient,
        A.qualifiedOpportunity,
        A.newOpportunity,
      );
      expect(crossRefs).toBe(0);
      // B's own references are accepted (the route works).
      const own = expectCreated(
        await call(keyB.key, createDevis, {
          body: { client_id: B.client, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' },
        }),
        devisSchema,
      );
      expect(row('devis', own.id)?.cabinet_id).toBe(cabinetB);
    },
  },

  [listDevis.operationId]: {
    title: "B's lists never hold A's quotes, even filtered on A's client or opportunity; A's cursor is invalid_cursor for B",
    async run() {
      const all = await listAs(keyB.key, listDevis, { limit: '100' });
      expect(all.data.map((d) => d.id)).toContain(B.pricedDevis);
      expectOnlyB('devis', all.data);
      const aOnly: Record<string, string>[] = [
        { client_id: A.personClient },
        { client_id: A.companyClient },
        { opportunity_id: A.qualifiedOpportunity },
        { opportunity_id: A.newOpportunity },
        { client_id: A.personClient, opportunity_id: A.newOpportunity, status: 'priced' },
        { status: 'signed' },
        { status: 'draft', client_id: A.personClient },
      ];
      for (const query of aOnly) {
        expect(await listAs(keyB.key, listDevis, query), JSON.stringify(query)).toEqual({
          data: [],
          next_cursor: null,
          has_more: false,
          count: 0,
        });
      }
      const filters: Record<string, string>[] = [
        { status: 'priced' },
        { status: 'draft' },
        { created_after: '2000-01-01T00:00:00Z' },
        { limit: '1' },
      ];
      for (const query of filters) {
        expectOnlyB('devis', (await listAs(keyB.key, listDevis, query)).data);
      }
      await expectCursorRefusedForB(listDevis);
      await expectCursorRefusedForB(listDevis, { client_id: A.personClient });
    },
  },

  [getDevis.operationId]: {
    title: "B's GET of A's quote (draft, priced or signed) is 404 not_found",
    async run() {
      await expectNotFoundForB(getDevis, 'devis_id', [A.draftDevis, A.pricedDevis, A.signedDevis]);
    },
  },

  [signDevis.operationId]: {
    title: "B's POST /devis/{A's id}/sign is 404 not_found and signs nothing",
    async run() {
      const db = server.deps.db.sqlite;
      const rowsBefore = [A.draftDevis, A.pricedDevis, A.signedDevis].map((id) => row('devis', id));
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      for (const id of [A.pricedDevis, A.draftDevis, A.signedDevis]) {
        // 404, not 409 invalid_devis_transition: the state of A's quote is not revealed either.
        expectError(await call(keyB.key, signDevis, { params: { devis_id: id } }), 404, 'not_found');
        expectError(
          await call(keyB.key, signDevis, {
            params: { devis_id: id },
            body: { signed_at: '2026-11-22T10:00:00Z' },
            headers: { 'Idempotency-Key': randomUUID() },
          }),
          404,
          'not_found',
        );
      }
      expect([A.draftDevis, A.pricedDevis, A.signedDevis].map((id) => row('devis', id))).toEqual(rowsBefore);
      expect(row('devis', A.pricedDevis)).toMatchObject({ status: 'priced', contract_id: null, signed_at: null });
      expect(count('SELECT count(*) AS n FROM contracts WHERE devis_id = ?', A.pricedDevis)).toBe(0);
      expect(db.prepare('SELECT stage FROM opportunities WHERE id = ?').get(A.newOpportunity)).toEqual({ stage: 'new' });
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore);
    },
  },

  [getDevisPdf.operationId]: {
    title: "B's GET /devis/{A's id}/pdf is 404 not_found, with no redirect",
    async run() {
      const mine = await call(keyA.key, getDevisPdf, { params: { devis_id: A.pricedDevis } });
      expect(mine.status).toBe(302);
      for (const id of [A.pricedDevis, A.signedDevis, A.draftDevis]) {
        const res = await call(keyB.key, getDevisPdf, { params: { devis_id: id } });
        // not_found, not pdf_not_available for the draft: nothing about A's quote leaks.
        expectError(res, 404, 'not_found');
        expect(res.headers.get('location')).toBeNull();
      }
    },
  },

  [downloadDevisPdf.operationId]: {
    title: "A's signed link with cabinet_id changed to B's is 403 invalid_signature; B's link cannot reach A's PDF",
    async run() {
      const redirect = await call(keyA.key, getDevisPdf, { params: { devis_id: A.pricedDevis } });
      expect(redirect.status).toBe(302);
      const link = new URL(redirect.headers.get('location') ?? '', server.url);
      expect(link.searchParams.get('cabinet_id')).toBe(cabinetA);
      const ok = await server.request(link.pathname + link.search);
      expect(ok.status).toBe(200);
      expect(Buffer.from(await ok.arrayBuffer()).toString()).toBe('%PDF-1.4 test');

      const asB = new URL(link);
      asB.searchParams.set('cabinet_id', cabinetB);
      for (const key of [null, keyB.key]) {
        const res = await fetchPath(key, asB.pathname + asB.search);
        expectError(res, 403, 'invalid_signature');
        expect(res.text).not.toContain('%PDF');
      }

      // B's own valid link, pointed at A's quote (B's cabinet and signature kept), is refused too.
      const bRedirect = await call(keyB.key, getDevisPdf, { params: { devis_id: B.pricedDevis } });
      expect(bRedirect.status).toBe(302);
      const bLink = new URL(bRedirect.headers.get('location') ?? '', server.url);
      const bOk = await server.request(bLink.pathname + bLink.search);
      expect(Buffer.from(await bOk.arrayBuffer()).toString()).toBe('%PDF-1.4 B');
      const pointedAtA = `${bLink.pathname.replace(B.pricedDevis, A.pricedDevis)}${bLink.search}`;
      expectError(await fetchPath(null, pointedAtA), 403, 'invalid_signature');
      const bWithA = new URL(bLink);
      bWithA.searchParams.set('cabinet_id', cabinetA);
      expectError(
        await fetchPath(null, `${bLink.pathname.replace(B.pricedDevis, A.pricedDevis)}${bWithA.search}`),
        403,
        'invalid_signature',
      );
    },
  },

  [getDevisDocument.operationId]: {
    title: "B's GET /devis/{A's id}/documents/1 is 404 not_found, with no redirect",
    async run() {
      const mine = await call(keyA.key, getDevisDocument, { params: { devis_id: A.pricedDevis, position: '1' } });
      expect(mine.status).toBe(302);
      for (const id of [A.pricedDevis, A.signedDevis, A.draftDevis]) {
        const res = await call(keyB.key, getDevisDocument, { params: { devis_id: id, position: '1' } });
        expectError(res, 404, 'not_found');
        expect(res.headers.get('location')).toBeNull();
      }
    },
  },

  [downloadDevisDocument.operationId]: {
    title: "A's signed document link with cabinet_id changed to B's is 403 invalid_signature; B's link cannot reach A's document",
    async run() {
      const redirect = await call(keyA.key, getDevisDocument, { params: { devis_id: A.pricedDevis, position: '1' } });
      const link = new URL(redirect.headers.get('location') ?? '', server.url);
      const ok = await server.request(link.pathname + link.search);
      expect(Buffer.from(await ok.arrayBuffer()).toString()).toBe('%PDF-1.4 conditions A');
      const asB = new URL(link);
      asB.searchParams.set('cabinet_id', cabinetB);
      for (const key of [null, keyB.key]) {
        const res = await fetchPath(key, asB.pathname + asB.search);
        expectError(res, 403, 'invalid_signature');
        expect(res.text).not.toContain('%PDF');
      }
      const bRedirect = await call(keyB.key, getDevisDocument, { params: { devis_id: B.pricedDevis, position: '1' } });
      const bLink = new URL(bRedirect.headers.get('location') ?? '', server.url);
      expectError(
        await fetchPath(null, `${bLink.pathname.replace(B.pricedDevis, A.pricedDevis)}${bLink.search}`),
        403,
        'invalid_signature',
      );
    },
  },
};
