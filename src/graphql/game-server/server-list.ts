/**
 * The keyset query behind `servers`: one statement for the page's rows and sort keys (a range scan of
 * the ordering's index from the cursor) and, only when `totalCount` or `totalPlayers` is asked for, one
 * count for both. No OFFSET anywhere: every page costs the same. Only the columns of the fields the query asks
 * for are read: on a busy page the JSON ones (players, rules) are most of the bytes PostgreSQL sends
 * and the API parses, and every other column costs parsing too (dates, arrays).
 */
import { Prisma, type GameServer as GameServerRow } from "../../generated/prisma/client";
import type { Db } from "../../shared/db";
import { toId } from "../../shared/ids";
import { decodeCursor, encodeCursor, type SortValue } from "../common/cursor";
import type { PageRequest } from "../common/connection";
import { BadUserInputError } from "../errors";
import { OrderDirection } from "./game-server.args";
import { selectSortValue, sortValueParam, type SortKey } from "./server-order";

/**
 * The game_server column behind each GameServer field, under the field's name (Prisma's model uses the
 * same names), so that toGameServer maps this statement's rows and Prisma's alike. Constants: never
 * built from input. `id` and `sourceId` are always read (cursors, the `history` and `source` fields).
 */
const FIELD_COLUMNS = {
  address: "g.address",
  queryPort: 'g.query_port AS "queryPort"',
  gamePort: 'g.game_port AS "gamePort"',
  protocol: "g.protocol",
  region: "g.region",
  country: "g.country",
  status: "g.status::text AS status",
  name: "g.name",
  map: "g.map",
  folder: "g.folder",
  game: "g.game",
  appId: 'g.app_id AS "appId"',
  gameId: 'g.game_id AS "gameId"',
  players: "g.players",
  playersSource: 'g.players_source::text AS "playersSource"',
  maxPlayers: 'g.max_players AS "maxPlayers"',
  bots: "g.bots",
  passwordProtected: 'g.password_protected AS "passwordProtected"',
  vacSecured: 'g.vac_secured AS "vacSecured"',
  dedicated: "g.dedicated",
  os: "g.os",
  version: "g.version",
  keywords: "g.keywords",
  steamId: 'g.steam_id AS "steamId"',
  pingMs: 'g.ping_ms AS "pingMs"',
  playerList: 'g.player_list AS "playerList"',
  rules: "g.rules",
  raw: "g.raw",
  firstSeenAt: 'g.first_seen_at AS "firstSeenAt"',
  lastListedAt: 'g.last_listed_at AS "lastListedAt"',
  lastQueriedAt: 'g.last_queried_at AS "lastQueriedAt"',
  lastAnsweredAt: 'g.last_answered_at AS "lastAnsweredAt"',
  lastError: 'g.last_error AS "lastError"',
  suspectedFake: 'g.suspected_fake AS "suspectedFake"',
  fakeReasons: 'g.fake_reasons::text[] AS "fakeReasons"',
  isRelay: 'g.is_relay AS "isRelay"',
  notQueryable: 'g.not_queryable AS "notQueryable"',
  hidden: "g.hidden",
  managementRegistered: 'g.management_registered AS "managementRegistered"',
} as const satisfies Partial<Record<keyof GameServerRow, string>>;
export type ServerField = keyof typeof FIELD_COLUMNS;
export const SERVER_FIELDS: ReadonlySet<string> = new Set(Object.keys(FIELD_COLUMNS));
const ALWAYS = 'g.id, g.source_id AS "sourceId"';

/** The select list for these fields (names that are not GameServer fields are ignored). */
function serverColumns(fields: ReadonlySet<string>): Prisma.Sql {
  return Prisma.raw(
    [
      ALWAYS,
      ...(Object.keys(FIELD_COLUMNS) as ServerField[])
        .filter((f) => fields.has(f))
        .map((f) => FIELD_COLUMNS[f]),
    ].join(", "),
  );
}

/** The first game server (in `order`) that matches `condition`, with the columns of these fields; null when none does. */
export async function readServer(
  db: Db,
  condition: Prisma.Sql,
  fields: ReadonlySet<string>,
  order: Prisma.Sql = Prisma.raw("g.id"),
): Promise<ServerRow | null> {
  const rows = await db.$queryRaw<
    ServerRow[]
  >`SELECT ${serverColumns(fields)} FROM game_server g WHERE ${condition} ORDER BY ${order} LIMIT 1`;
  return rows[0] ?? null;
}

/** One row: id and sourceId, and the columns of the fields that were asked for (all of them for Prisma's rows). */
export type ServerRow = Pick<GameServerRow, "id" | "sourceId"> &
  Partial<Pick<GameServerRow, ServerField>>;

export interface KeysetRow {
  id: number;
  sortValue: SortValue;
  cursor: string;
  row: ServerRow;
}

export interface KeysetPage {
  rows: KeysetRow[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

export async function listServerPage(
  db: Db,
  where: Prisma.Sql,
  key: SortKey,
  direction: OrderDirection,
  page: PageRequest,
  fields: ReadonlySet<string> = SERVER_FIELDS,
): Promise<KeysetPage> {
  // Walking backwards reads the index the other way, then the rows are put back in display order.
  const ascending = (direction === OrderDirection.ASC) !== (page.direction === "backward");
  const sqlDir = Prisma.raw(ascending ? "ASC" : "DESC");
  const cmp = Prisma.raw(ascending ? ">" : "<");
  const order = `${key.cursorName}:${direction}`;

  let after = Prisma.empty;
  if (page.cursor !== null) {
    const c = decodeCursor(page.cursor, order, page.cursorArgument);
    const value = sortValueParam(key, c.value);
    if (value === null)
      throw new BadUserInputError(
        page.cursorArgument,
        "not a valid cursor (sort key does not match the ordering)",
      );
    after = Prisma.sql`AND (${key.sql}, ${key.idSql}) ${cmp} (${value}, ${c.id}::bigint)`;
  }
  if (page.size === 0) return { rows: [], hasNextPage: false, hasPreviousPage: false };

  const columns = serverColumns(fields);
  const found = await db.$queryRaw<Array<ServerRow & { sort_value: SortValue }>>`
    SELECT ${selectSortValue(key)} AS sort_value, ${columns}
    FROM game_server g ${key.join}
    WHERE ${where} ${after}
    ORDER BY ${key.sql} ${sqlDir}, ${key.idSql} ${sqlDir}
    LIMIT ${page.size + 1}`;
  const more = found.length > page.size;
  const slice = found.slice(0, page.size);
  if (page.direction === "backward") slice.reverse();
  const rows = slice.map((r) => {
    const id = toId(r.id);
    return {
      id,
      sortValue: r.sort_value,
      cursor: encodeCursor({ order, value: r.sort_value, id }),
      row: r,
    };
  });
  // Relay: the far side is known exactly from the extra row; the near side only says a cursor was given.
  return page.direction === "forward"
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
