/**
 * The keyset query behind `servers`: one statement for the page's ids and sort keys (a range scan of
 * the ordering's index from the cursor), one for the rows, and, only when `totalCount` or
 * `totalPlayers` is asked for, one count for both. No OFFSET anywhere: every page costs the same.
 */
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../../shared/db';
import { toId } from '../../shared/ids';
import { decodeCursor, encodeCursor, type SortValue } from '../common/cursor';
import type { PageRequest } from '../common/connection';
import { BadUserInputError } from '../errors';
import { OrderDirection } from './game-server.args';
import { selectSortValue, sortValueParam, type SortKey } from './server-order';

export interface KeysetRow {
  id: number;
  sortValue: SortValue;
  cursor: string;
}

export interface KeysetPage {
  rows: KeysetRow[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

export async function listServerPage(db: Db, where: Prisma.Sql, key: SortKey, direction: OrderDirection, page: PageRequest): Promise<KeysetPage> {
  // Walking backwards reads the index the other way, then the rows are put back in display order.
  const ascending = (direction === OrderDirection.ASC) !== (page.direction === 'backward');
  const sqlDir = Prisma.raw(ascending ? 'ASC' : 'DESC');
  const cmp = Prisma.raw(ascending ? '>' : '<');
  const order = `${key.cursorName}:${direction}`;

  let after = Prisma.empty;
  if (page.cursor !== null) {
    const c = decodeCursor(page.cursor, order, page.cursorArgument);
    const value = sortValueParam(key, c.value);
    if (value === null) throw new BadUserInputError(page.cursorArgument, 'not a valid cursor (sort key does not match the ordering)');
    after = Prisma.sql`AND (${key.sql}, g.id) ${cmp} (${value}, ${c.id}::bigint)`;
  }
  if (page.size === 0) return { rows: [], hasNextPage: false, hasPreviousPage: false };

  const found = await db.$queryRaw<Array<{ id: bigint; sort_value: SortValue }>>`
    SELECT g.id, ${selectSortValue(key)} AS sort_value
    FROM game_server g
    WHERE ${where} ${after}
    ORDER BY ${key.sql} ${sqlDir}, g.id ${sqlDir}
    LIMIT ${page.size + 1}`;
  const more = found.length > page.size;
  const slice = found.slice(0, page.size);
  if (page.direction === 'backward') slice.reverse();
  const rows = slice.map((r) => {
    const id = toId(r.id);
    return { id, sortValue: r.sort_value, cursor: encodeCursor({ order, value: r.sort_value, id }) };
  });
  // Relay: the far side is known exactly from the extra row; the near side only says a cursor was given.
  return page.direction === 'forward'
    ? { rows, hasNextPage: more, hasPreviousPage: page.cursor !== null }
    : { rows, hasNextPage: page.cursor !== null, hasPreviousPage: more };
}

export interface ServerTotals {
  servers: number;
  /** Players on the matching servers that are ONLINE (an offline server keeps its last count). */
  players: number;
}

export async function countServers(db: Db, where: Prisma.Sql): Promise<ServerTotals> {
  const [row] = await db.$queryRaw<Array<{ n: number; players: number }>>`
    SELECT count(*)::int AS n, coalesce(sum(g.players) FILTER (WHERE g.status = 'ONLINE'), 0)::int AS players
    FROM game_server g WHERE ${where}`;
  return { servers: row?.n ?? 0, players: row?.players ?? 0 };
}
