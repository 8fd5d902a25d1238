import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Page } from '../../../shared/pagination.js';
import { ApiError } from '../../errors.js';

/** Where a page ended: the (created_at, id) of its last item. */
export interface CursorPosition {
  createdAt: number;
  id: string;
}

/** What a cursor is bound to: it is refused for another cabinet, another list or other filters. */
export interface CursorScope {
  cabinetId: string;
  resource: string;
  filters: Record<string, unknown>;
}

function scopeString(scope: CursorScope): string {
  const filters = Object.entries(scope.filters)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return `${scope.cabinetId}|${scope.resource}|${JSON.stringify(filters)}`;
}

function sign(key: Buffer, payload: string, scope: CursorScope): Buffer {
  return createHmac('sha256', key)
    .update(`${payload}|${scopeString(scope)}`)
    .digest();
}

function encodeTuple(key: Buffer, scope: CursorScope, tuple: readonly unknown[]): string {
  const payload = Buffer.from(JSON.stringify(tuple)).toString('base64url');
  return `${payload}.${sign(key, payload, scope).toString('base64url')}`;
}

const INVALID = 'This cursor is not valid here: it was altered, or made for other filters or another list. Start again without cursor.';

/** The signed tuple of a cursor, read back by `read` (null: not a tuple of this list). */
function decodeTuple<P>(key: Buffer, scope: CursorScope, cursor: string, read: (tuple: unknown[]) => P | null): P {
  const [payload, mac, extra] = cursor.split('.');
  if (!payload || !mac || extra !== undefined) throw new ApiError('invalid_cursor', INVALID);
  // Compare the canonical text, not decoded bytes: base64url's spare bits would let altered cursors through.
  const expected = Buffer.from(sign(key, payload, scope).toString('base64url'));
  const given = Buffer.from(mac);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ApiError('invalid_cursor', INVALID);
  const decoded: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  const position = Array.isArray(decoded) ? read(decoded) : null;
  if (position === null) throw new ApiError('invalid_cursor', INVALID);
  return position;
}

const encodeCursor = (key: Buffer, scope: CursorScope, position: CursorPosition) =>
  encodeTuple(key, scope, [position.createdAt, position.id]);

const decodeCursor = (key: Buffer, scope: CursorScope, cursor: string): CursorPosition =>
  decodeTuple(key, scope, cursor, ([createdAt, id]) =>
    typeof createdAt === 'number' && typeof id === 'string' ? { createdAt, id } : null,
  );

/** Where a page in an order of its own ended: its last item's sort key and id. */
interface SortPosition {
  key: string | number;
  id: string;
}

/** The decode/encode pair of a list sorted by another key than its creation. */
function sortCursorCodec(key: Buffer, scope: CursorScope) {
  return {
    after: (cursor: string | undefined): SortPosition | undefined =>
      cursor === undefined
        ? undefined
        : decodeTuple(key, scope, cursor, ([sortKey, id]) =>
            (typeof sortKey === 'string' || typeof sortKey === 'number') && typeof id === 'string' ? { key: sortKey, id } : null,
          ),
    next: (position: SortPosition) => encodeTuple(key, scope, [position.key, position.id]),
  };
}

/**
 * A list in an order SQLite cannot give (French names, accents aside): the sort key of every record
 * the filters keep, how two keys compare, and the items of some ids. The keys are sorted here (a
 * cabinet's records fit in memory) and the page after the cursor's position is read by id.
 */
export interface OwnOrder<Item> {
  name: string;
  keys: () => readonly SortPosition[];
  compare: (a: SortPosition['key'], b: SortPosition['key']) => number;
  read: (ids: string[]) => Map<string, Item>;
}

function sortedPage<Item>(
  order: OwnOrder<Item>,
  codec: ReturnType<typeof sortCursorCodec>,
  query: { limit: number; cursor?: string },
): Page<Item> {
  const compare = (a: SortPosition, b: SortPosition) => order.compare(a.key, b.key) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const after = codec.after(query.cursor);
  const rest = order
    .keys()
    .filter((entry) => after === undefined || compare(entry, after) > 0)
    .sort(compare);
  const page = rest.slice(0, query.limit);
  const items = order.read(page.map((entry) => entry.id));
  const last = page.at(-1);
  const hasMore = rest.length > query.limit;
  return {
    data: page.flatMap((entry) => {
      const item = items.get(entry.id);
      return item === undefined ? [] : [item];
    }),
    next_cursor: hasMore && last ? codec.next(last) : null,
    has_more: hasMore,
    count: page.length,
  };
}

/**
 * One page of a cabinet's list: newest first, `limit + 1` rows read after the cursor's
 * `(created_at, id)`, or in `order` when one is asked. The cursor is signed for the list, its filters
 * and its order, so that a cursor of one order is refused by the other.
 */
export function listPage<Row extends CursorPosition, Item>(
  key: Buffer,
  scope: CursorScope,
  query: { limit: number; cursor?: string },
  newest: { read: (after: CursorPosition | undefined, limit: number) => Row[]; toItem: (row: Row) => Item },
  order?: OwnOrder<Item>,
): Page<Item> {
  if (order) return sortedPage(order, sortCursorCodec(key, { ...scope, filters: { ...scope.filters, sort: order.name } }), query);
  const codec = cursorCodec(key, scope);
  return toPage(newest.read(codec.after(query.cursor), query.limit + 1), query.limit, newest.toItem, codec.next);
}

/**
 * Turns limit + 1 rows (newest first) into a page: the extra row only says whether there is more.
 */
export function toPage<Row extends CursorPosition, Item>(
  rows: Row[],
  limit: number,
  toItem: (row: Row) => Item,
  cursorFor: (position: CursorPosition) => string,
): Page<Item> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(toItem),
    next_cursor: hasMore && last ? cursorFor({ createdAt: last.createdAt, id: last.id }) : null,
    has_more: hasMore,
    count: pageRows.length,
  };
}

/** Builds the decode/encode pair for one list request. */
export function cursorCodec(key: Buffer, scope: CursorScope) {
  return {
    after: (cursor: string | undefined) => (cursor === undefined ? undefined : decodeCursor(key, scope, cursor)),
    next: (position: CursorPosition) => encodeCursor(key, scope, position),
  };
}

/** A client's list query: a page size, a cursor, and the filters a client may add (client_id…). */
export interface ClientListQuery {
  limit: number;
  cursor?: string;
  client_id?: string;
  created_after?: string;
}

/**
 * One page of a cabinet's records filtered by client: the cursor bound to the resource and its
 * filters, `read` asked for limit + 1 rows after it (newest first).
 */
export function clientListPage<Row extends CursorPosition, Item>(
  key: Buffer,
  scope: { cabinetId: string; resource: string },
  query: ClientListQuery,
  read: (filters: { clientId?: string; createdAfter?: number; after?: CursorPosition }, limit: number) => Row[],
  toItem: (row: Row) => Item,
): Page<Item> {
  const codec = cursorCodec(key, { ...scope, filters: { client_id: query.client_id, created_after: query.created_after } });
  const rows = read(
    {
      clientId: query.client_id,
      createdAfter: query.created_after === undefined ? undefined : Date.parse(query.created_after),
      after: codec.after(query.cursor),
    },
    query.limit + 1,
  );
  return toPage(rows, query.limit, toItem, codec.next);
}
