/**
 * The CRM routes (tag CRM): opportunities and clients.
 * One check per operationId, run by crm.test.ts; test/helpers/isolation.ts holds the two cabinets.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { clientSchema, opportunitySchema } from '../../../shared/crm.js';
import {
  createClient,
  createOpportunity,
  eraseClient,
  getClient,
  getOpportunity,
  listClients,
  listOpportunities,
  updateClient,
  updateOpportunity,
} from '../../../shared/crm-endpoints.js';
import { addOpportunityNote, listOpportunityNotes } from '../../../shared/opportunity-notes.js';
import { listEvents } from '../../../server/events/service.js';
import { expectError } from '../../helpers/api.js';
import {
  A,
  aExtra,
  B,
  cabinetA,
  cabinetB,
  cabinetRowCounts,
  call,
  clock,
  count,
  expectCreated,
  expectCursorRefusedForB,
  expectNotFoundForB,
  expectOnlyB,
  keyA,
  keyB,
  listAs,
  row,
  server,
  type IsolationCheck,
} from '../../helpers/isolation.js';

export const CRM_CHECKS: Record<string, IsolationCheck> = {
  [createOpportunity.operationId]: {
    title: 'one Idempotency-Key used by A then B gives each cabinet its own new opportunity',
    async run() {
      const key = randomUUID();
      const body = { title: 'Shared key', product: 'auto', contact: { last_name: 'Petit' } };
      const before = cabinetRowCounts(cabinetB).opportunities;
      const a = await call(keyA.key, createOpportunity, { body, headers: { 'Idempotency-Key': key } });
      const fromA = expectCreated(a, opportunitySchema);
      const b = await call(keyB.key, createOpportunity, { body, headers: { 'Idempotency-Key': key } });
      const fromB = expectCreated(b, opportunitySchema);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(fromB.id).not.toBe(fromA.id);
      expect(row('opportunities', fromA.id)?.cabinet_id).toBe(cabinetA);
      expect(row('opportunities', fromB.id)?.cabinet_id).toBe(cabinetB);
      expect(cabinetRowCounts(cabinetB).opportunities).toBe(before + 1);
      // One claim per cabinet; each replays its own cabinet's resource.
      expect(count('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?', key)).toBe(2);
      const replayB = await call(keyB.key, createOpportunity, { body, headers: { 'Idempotency-Key': key } });
      expect(replayB.status).toBe(200);
      expect(opportunitySchema.parse(replayB.body).id).toBe(fromB.id);
      const replayA = await call(keyA.key, createOpportunity, { body, headers: { 'Idempotency-Key': key } });
      expect(opportunitySchema.parse(replayA.body).id).toBe(fromA.id);
      // And each cabinet's opportunity is invisible to the other.
      expectError(await call(keyA.key, getOpportunity, { params: { opportunity_id: fromB.id } }), 404, 'not_found');
      expectError(await call(keyB.key, getOpportunity, { params: { opportunity_id: fromA.id } }), 404, 'not_found');
      aExtra.push(fromA.id);
    },
  },

  [listOpportunities.operationId]: {
    title: "B's lists never hold A's opportunities, whatever the filters; A's cursor is invalid_cursor for B",
    async run() {
      const all = await listAs(keyB.key, listOpportunities, { limit: '100' });
      expect(all.data.map((o) => o.id)).toContain(B.opportunity);
      expectOnlyB('opportunities', all.data);
      const filters: Record<string, string>[] = [
        { stage: 'qualified' },
        { stage: 'new' },
        { stage: 'won' },
        { created_after: '2000-01-01T00:00:00Z' },
        { stage: 'qualified', created_after: '2000-01-01T00:00:00Z', limit: '1' },
      ];
      for (const query of filters) {
        const page = await listAs(keyB.key, listOpportunities, query);
        expectOnlyB('opportunities', page.data);
      }
      // A filter only A's rows match gives B an empty page, not A's rows.
      const qualified = await listAs(keyB.key, listOpportunities, { stage: 'qualified' });
      expect(qualified).toEqual({ data: [], next_cursor: null, has_more: false, count: 0 });
      await expectCursorRefusedForB(listOpportunities);
      await expectCursorRefusedForB(listOpportunities, { created_after: '2000-01-01T00:00:00Z' });
    },
  },

  [getOpportunity.operationId]: {
    title: "B's GET of A's opportunity is 404 not_found",
    async run() {
      await expectNotFoundForB(getOpportunity, 'opportunity_id', [A.qualifiedOpportunity, A.newOpportunity]);
    },
  },

  [updateOpportunity.operationId]: {
    title: "B's PATCH of A's opportunity is 404 not_found and changes nothing",
    async run() {
      const id = A.qualifiedOpportunity;
      const rowBefore = row('opportunities', id);
      const eventsBefore = [cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events];
      const bodyBefore = (await call(keyA.key, getOpportunity, { params: { opportunity_id: id } })).text;
      clock.advance(1000); // an update would change updated_at
      const patches = [
        { title: 'Hijacked' },
        { stage: 'won' },
        { stage: 'lost', reopen: true },
        { contact: { email: 'attacker@example.fr' }, tags: ['b'] },
        { expected_value_eur: 1 },
      ];
      for (const patch of patches) {
        const res = await call(keyB.key, updateOpportunity, { params: { opportunity_id: id }, body: patch });
        expectError(res, 404, 'not_found');
      }
      expect(row('opportunities', id)).toEqual(rowBefore);
      expect([cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events]).toEqual(eventsBefore);
      expect((await call(keyA.key, getOpportunity, { params: { opportunity_id: id } })).text).toBe(bodyBefore);
      // The same PATCH by A does apply (the route works; only the cabinet differs).
      const mine = await call(keyA.key, updateOpportunity, { params: { opportunity_id: A.newOpportunity }, body: { tags: ['a-only'] } });
      expect(mine.status, mine.text).toBe(200);
    },
  },

  [listOpportunityNotes.operationId]: {
    title: "B's GET of the notes of A's opportunity is 404 not_found",
    async run() {
      await expectNotFoundForB(listOpportunityNotes, 'opportunity_id', [A.qualifiedOpportunity, A.newOpportunity]);
    },
  },

  [addOpportunityNote.operationId]: {
    title: "B's note on A's opportunity is 404 not_found and writes nothing; B's opportunity with A's client is 400",
    async run() {
      const before = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const res = await call(keyB.key, addOpportunityNote, {
        params: { opportunity_id: A.qualifiedOpportunity },
        body: { body: 'Intrus' },
      });
      expectError(res, 404, 'not_found');
      const withAsClient = await call(keyB.key, createOpportunity, {
        body: { title: 'Vol', product: 'auto', contact: { last_name: 'X' }, client_id: A.personClient },
      });
      expectError(withAsClient, 400, 'validation_error');
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(before);
      // The same note by A is written (the route works; only the cabinet differs).
      const mine = await call(keyA.key, addOpportunityNote, { params: { opportunity_id: A.newOpportunity }, body: { body: 'À moi' } });
      expect(mine.status, mine.text).toBe(201);
    },
  },

  [createClient.operationId]: {
    title: 'a client created by B is B’s only; one Idempotency-Key used by A then B gives two clients',
    async run() {
      const key = randomUUID();
      const body = { type: 'person', last_name: 'Leroy' };
      const fromA = expectCreated(await call(keyA.key, createClient, { body, headers: { 'Idempotency-Key': key } }), clientSchema);
      const b = await call(keyB.key, createClient, { body, headers: { 'Idempotency-Key': key } });
      const fromB = expectCreated(b, clientSchema);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(fromB.id).not.toBe(fromA.id);
      expect(row('clients', fromA.id)?.cabinet_id).toBe(cabinetA);
      expect(row('clients', fromB.id)?.cabinet_id).toBe(cabinetB);
      expectError(await call(keyA.key, getClient, { params: { client_id: fromB.id } }), 404, 'not_found');
      expectError(await call(keyB.key, getClient, { params: { client_id: fromA.id } }), 404, 'not_found');
      aExtra.push(fromA.id);
    },
  },

  [listClients.operationId]: {
    title: "B's lists never hold A's clients, whatever the filters; A's cursor is invalid_cursor for B",
    async run() {
      const all = await listAs(keyB.key, listClients, { limit: '100' });
      expect(all.data.map((c) => c.id)).toContain(B.client);
      expectOnlyB('clients', all.data);
      const filters: Record<string, string>[] = [
        { type: 'person' },
        { type: 'company' },
        { created_after: '2000-01-01T00:00:00Z' },
        { type: 'company', limit: '1' },
      ];
      for (const query of filters) {
        expectOnlyB('clients', (await listAs(keyB.key, listClients, query)).data);
      }
      expect(await listAs(keyB.key, listClients, { type: 'company' })).toEqual({ data: [], next_cursor: null, has_more: false, count: 0 });
      await expectCursorRefusedForB(listClients);
      await expectCursorRefusedForB(listClients, { type: 'person' });
    },
  },

  [getClient.operationId]: {
    title: "B's GET of A's client is 404 not_found",
    async run() {
      await expectNotFoundForB(getClient, 'client_id', [A.personClient, A.companyClient]);
    },
  },

  [updateClient.operationId]: {
    title: "B's PATCH of A's client is 404 not_found and changes nothing",
    async run() {
      const ids = [A.personClient, A.companyClient];
      const rowsBefore = ids.map((id) => row('clients', id));
      const eventsBefore = [cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events];
      clock.advance(1000); // an update would change updated_at
      for (const id of ids) {
        for (const patch of [{ last_name: 'Hijacked' }, { email: 'attacker@example.fr', phone: null }, { company_name: null }]) {
          expectError(await call(keyB.key, updateClient, { params: { client_id: id }, body: patch }), 404, 'not_found');
        }
      }
      expect(ids.map((id) => row('clients', id))).toEqual(rowsBefore);
      expect([cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events]).toEqual(eventsBefore);
      // The same PATCH by B of its own client does apply (the route works; only the cabinet differs).
      const mine = await call(keyB.key, updateClient, { params: { client_id: B.client }, body: { first_name: 'Brigitte' } });
      expect(mine.status, mine.text).toBe(200);
    },
  },

  [eraseClient.operationId]: {
    title: "B's DELETE of A's client is 404 not_found and erases nothing; B's erasure rewrites only B's copies",
    async run() {
      const ids = [A.personClient, A.companyClient];
      const rowsBefore = ids.map((id) => row('clients', id));
      const eventsBefore = [cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events];
      for (const id of ids) expectError(await call(keyB.key, eraseClient, { params: { client_id: id } }), 404, 'not_found');
      expect(ids.map((id) => row('clients', id))).toEqual(rowsBefore);
      expect([cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events]).toEqual(eventsBefore);
      await expectNotFoundForB(getClient, 'client_id', ids);

      // One Idempotency-Key used by A then B: B erasing its client leaves A's stored creation as it was.
      const key = randomUUID();
      const body = { type: 'person', last_name: 'Mercier', email: 'mercier@example.fr' };
      const fromA = expectCreated(await call(keyA.key, createClient, { body, headers: { 'Idempotency-Key': key } }), clientSchema);
      const fromB = expectCreated(await call(keyB.key, createClient, { body, headers: { 'Idempotency-Key': key } }), clientSchema);
      aExtra.push(fromA.id);
      expect((await call(keyB.key, eraseClient, { params: { client_id: fromB.id } })).status).toBe(204);
      expect(clientSchema.parse((await call(keyB.key, createClient, { body, headers: { 'Idempotency-Key': key } })).body)).toMatchObject({
        id: fromB.id,
        last_name: null,
      });
      expect(clientSchema.parse((await call(keyA.key, createClient, { body, headers: { 'Idempotency-Key': key } })).body)).toMatchObject({
        id: fromA.id,
        last_name: 'Mercier',
      });
      expect(row('clients', fromA.id)).toMatchObject({ cabinet_id: cabinetA, last_name: 'Mercier', erased_at: null });
      expect(listEvents(server.deps, cabinetA).filter((e) => e.type === 'client.erased')).toEqual([]);
    },
  },
};
