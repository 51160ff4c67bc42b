/**
 * Sort keys of `servers`, each a non-NULL SQL expression matched by an index on (key, id) (migration
 * 20261122010000_api_keyset_indexes): keyset paging is then one index range scan whatever the page.
 * LAST_SEEN and PING, whose values every answer changes, are columns of game_server_sort, joined as `sk`
 * (migration 20261128000000_game_server_sort_keys): indexed on game_server, they kept the crawl's update of
 * each answered row from being heap-only. The expressions are constants of this file, never built from input.
 */
import { Prisma } from "../../generated/prisma/client";
import { OrderDirection, ServerOrderField } from "./game-server.args";

export type SortKind = "int" | "text" | "time";

export interface SortKey {
  /** Name in cursors: a cursor made under one ordering is refused under another. */
  cursorName: string;
  sql: Prisma.Sql;
  /** The tiebreak, the server's id, as the key's index holds it beside the key. */
  idSql: Prisma.Sql;
  /** The join that brings the key's table in, or empty when the key is game_server's own. */
  join: Prisma.Sql;
  kind: SortKind;
  defaultDirection: OrderDirection;
}

// The sentinels put unknown values last in the usual direction (see the migration).
const TEXT_MAX = "chr(1114111)";
const OWN = { idSql: Prisma.raw("g.id"), join: Prisma.empty };
const SORT_TABLE = {
  idSql: Prisma.raw("sk.game_server_id"),
  join: Prisma.raw("JOIN game_server_sort sk ON sk.game_server_id = g.id"),
};

export const SORT_KEYS: Readonly<Record<ServerOrderField, SortKey>> = {
  [ServerOrderField.PLAYERS]: {
    ...OWN,
    cursorName: "players",
    sql: Prisma.raw("g.players"),
    kind: "int",
    defaultDirection: OrderDirection.DESC,
  },
  [ServerOrderField.MAX_PLAYERS]: {
    ...OWN,
    cursorName: "maxPlayers",
    sql: Prisma.raw("g.max_players"),
    kind: "int",
    defaultDirection: OrderDirection.DESC,
  },
  [ServerOrderField.NAME]: {
    ...OWN,
    cursorName: "name",
    sql: Prisma.raw(`(COALESCE(lower(g.name), ${TEXT_MAX}) COLLATE "C")`),
    kind: "text",
    defaultDirection: OrderDirection.ASC,
  },
  [ServerOrderField.MAP]: {
    ...OWN,
    cursorName: "map",
    sql: Prisma.raw(`(COALESCE(lower(g.map), ${TEXT_MAX}) COLLATE "C")`),
    kind: "text",
    defaultDirection: OrderDirection.ASC,
  },
  [ServerOrderField.LAST_SEEN]: {
    ...SORT_TABLE,
    cursorName: "lastSeen",
    // COALESCE(g.last_answered_at, the epoch), kept by game_server's triggers.
    sql: Prisma.raw("sk.last_seen_key"),
    kind: "time",
    defaultDirection: OrderDirection.DESC,
  },
  [ServerOrderField.FIRST_SEEN]: {
    ...OWN,
    cursorName: "firstSeen",
    sql: Prisma.raw("g.first_seen_at"),
    kind: "time",
    defaultDirection: OrderDirection.DESC,
  },
  [ServerOrderField.PING]: {
    ...SORT_TABLE,
    cursorName: "ping",
    // COALESCE(g.ping_ms, 32767), kept by game_server's triggers.
    sql: Prisma.raw("sk.ping_key"),
    kind: "int",
    defaultDirection: OrderDirection.ASC,
  },
};

/** The map key, for the map filter: the same expression as the MAP ordering, so it uses that index. */
export const MAP_KEY_SQL = SORT_KEYS[ServerOrderField.MAP].sql;

/** The key as selected for a cursor: time keys as epoch milliseconds. */
export function selectSortValue(key: SortKey): Prisma.Sql {
  return key.kind === "time"
    ? Prisma.sql`(extract(epoch from ${key.sql}) * 1000)::float8`
    : key.sql;
}

/** A cursor's sort value as an SQL parameter of the key's type; null when the cursor does not fit the key. */
export function sortValueParam(key: SortKey, value: unknown): Prisma.Sql | null {
  switch (key.kind) {
    case "int":
      return typeof value === "number" && Number.isSafeInteger(value)
        ? Prisma.sql`${value}::int`
        : null;
    case "text":
      return typeof value === "string" ? Prisma.sql`(${value}::text COLLATE "C")` : null;
    case "time":
      return typeof value === "number" && Number.isFinite(value)
        ? Prisma.sql`${new Date(value)}::timestamptz`
        : null;
  }
}
