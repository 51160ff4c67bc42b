/**
 * Sort keys of `servers`, each a non-NULL SQL expression matched by an index on (key, id) (migration
 * 20261122010000_api_keyset_indexes): keyset paging is then one index range scan whatever the page.
 * The expressions are constants of this file, never built from input.
 */
import { Prisma } from "../../generated/prisma/client";
import { OrderDirection, ServerOrderField } from "./game-server.args";

export type SortKind = "int" | "text" | "time";

export interface SortKey {
  /** Name in cursors: a cursor made under one ordering is refused under another. */
  cursorName: string;
  sql: Prisma.Sql;
  kind: SortKind;
  defaultDirection: OrderDirection;
}

// The sentinels put unknown values last in the usual direction (see the migration).
const TEXT_MAX = "chr(1114111)";
const EPOCH = "TIMESTAMPTZ '1970-01-01 00:00:00+00'";

export const SORT_KEYS: Readonly<Record<ServerOrderField, SortKey>> = {
  [ServerOrderField.PLAYERS]: {
    cursorName: "players",
    sql: Prisma.raw("g.players"),
    kind: "int",
    defaultDirection: OrderDirection.DESC,
  },
  [ServerOrderField.MAX_PLAYERS]: {
    cursorName: "maxPlayers",
    sql: Prisma.raw("g.max_players"),
    kind: "int",
    defaultDirection: OrderDirection.DESC,
  },
  [ServerOrderField.NAME]: {
    cursorName: "name",
    sql: Prisma.raw(`(COALESCE(lower(g.name), ${TEXT_MAX}) COLLATE "C")`),
    kind: "text",
    defaultDirection: OrderDirection.ASC,
  },
  [ServerOrderField.MAP]: {
    cursorName: "map",
    sql: Prisma.raw(`(COALESCE(lower(g.map), ${TEXT_MAX}) COLLATE "C")`),
    kind: "text",
    defaultDirection: OrderDirection.ASC,
  },
  [ServerOrderField.LAST_SEEN]: {
    cursorName: "lastSeen",
    sql: Prisma.raw(`COALESCE(g.last_answered_at, ${EPOCH})`),
    kind: "time",
    defaultDirection: OrderDirection.DESC,
  },
  [ServerOrderField.FIRST_SEEN]: {
    cursorName: "firstSeen",
    sql: Prisma.raw("g.first_seen_at"),
    kind: "time",
    defaultDirection: OrderDirection.DESC,
  },
  [ServerOrderField.PING]: {
    cursorName: "ping",
    sql: Prisma.raw("COALESCE(g.ping_ms, 32767)"),
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
