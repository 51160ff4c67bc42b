/**
 * `ServerFilterInput` → validated SQL conditions over `game_server g`. Every value is a bound
 * parameter (Prisma.sql); only constant fragments of this file are raw. A bad value is a
 * BAD_USER_INPUT naming `filter.<field>`.
 */
import { Prisma } from "../../generated/prisma/client";
import { PROTOCOL_IDS } from "../../protocol";
import { networkText, parseCidr, parseIp } from "../common/ip";
import { BadUserInputError } from "../errors";
import type { ServerFilterInput } from "./game-server.args";
import { MAP_KEY_SQL } from "./server-order";

const MAX_TEXT = 100;
const MAX_LIST = 50;
const MAX_WITHIN_SECONDS = 10 * 366 * 24 * 3600;

function text(path: string, value: string): string {
  const t = value.trim();
  if (t === "") throw new BadUserInputError(path, "must not be empty");
  if (t.length > MAX_TEXT) throw new BadUserInputError(path, `longer than ${MAX_TEXT} characters`);
  return t;
}

/**
 * A player name to look for. The stored names are one per line (game_server.player_names), so a text with a
 * line break is refused rather than matched across two players.
 */
function playerNameText(path: string, value: string): string {
  const t = text(path, value);
  if (t.includes("\n")) throw new BadUserInputError(path, "must not contain a line break");
  return t;
}

function list<T>(path: string, values: readonly T[]): readonly T[] {
  if (values.length === 0) throw new BadUserInputError(path, "must not be an empty list");
  if (values.length > MAX_LIST) throw new BadUserInputError(path, `more than ${MAX_LIST} values`);
  return values;
}

function count(path: string, n: number): number {
  if (!Number.isInteger(n) || n < 0)
    throw new BadUserInputError(path, "must be a non-negative integer");
  return n;
}

/** Escape LIKE's own metacharacters so user text matches literally. */
function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `de_dust2` exact, `de_*` prefix, `*dust*` wildcard → a LIKE pattern over the lower-cased map key. */
export function mapPattern(value: string): { exact: string } | { like: string } {
  const lower = value.toLowerCase();
  if (!lower.includes("*")) return { exact: lower };
  return { like: lower.split("*").map(likeLiteral).join("%") };
}

/** An IP (`203.0.113.7`) or a CIDR range (`203.0.113.0/24`), as text for an `inet` comparison. */
export function parseAddressOrCidr(path: string, value: string): { ip: string } | { cidr: string } {
  if (value.includes("/")) {
    const range = parseCidr(value);
    if (range) return { cidr: networkText(range) };
  } else {
    const ip = parseIp(value);
    if (ip) return { ip: ip.toString() };
  }
  throw new BadUserInputError(path, `'${value}' is neither an IP address nor a CIDR range`);
}

export function buildServerWhere(
  filter: ServerFilterInput | null | undefined,
  now: Date,
): Prisma.Sql {
  const f = filter ?? {};
  const p = (name: string): string => `filter.${name}`;
  const conds: Prisma.Sql[] = [Prisma.sql`NOT g.hidden`];

  if (f.excludeSuspectedFakes ?? true)
    conds.push(Prisma.sql`NOT g.suspected_fake AND NOT g.is_relay`);
  // Through game_server_search, where the name's trigram index is (a copy kept by triggers).
  if (f.search != null)
    conds.push(
      Prisma.sql`g.id IN (SELECT s.game_server_id FROM game_server_search s WHERE s.name ILIKE ${"%" + likeLiteral(text(p("search"), f.search)) + "%"})`,
    );
  // game_server_player_search's trigram index finds the servers any of whose names since its last compaction
  // match (src/crawler/store/player-name-search.ts); their current names decide.
  if (f.playerName != null) {
    const pattern = "%" + likeLiteral(playerNameText(p("playerName"), f.playerName)) + "%";
    conds.push(
      Prisma.sql`g.id IN (SELECT s.game_server_id FROM game_server_player_search s WHERE s.names ILIKE ${pattern}) AND g.player_names ILIKE ${pattern}`,
    );
  }
  if (f.folder != null) conds.push(Prisma.sql`g.folder = ${text(p("folder"), f.folder)}`);
  if (f.appId != null) conds.push(Prisma.sql`g.app_id = ${count(p("appId"), f.appId)}`);
  if (f.map != null) {
    const m = mapPattern(text(p("map"), f.map));
    conds.push(
      "exact" in m
        ? Prisma.sql`${MAP_KEY_SQL} = (${m.exact}::text COLLATE "C")`
        : Prisma.sql`${MAP_KEY_SQL} LIKE (${m.like}::text COLLATE "C")`,
    );
  }
  if (f.regions != null) {
    const regions = list(p("regions"), f.regions).map((r) => {
      if (!Number.isInteger(r) || r < 0 || r > 255)
        throw new BadUserInputError(p("regions"), `${r} is not a region code (0-255)`);
      return r;
    });
    conds.push(Prisma.sql`g.region = ANY(${regions}::int[])`);
  }
  if (f.countries != null) {
    const countries = list(p("countries"), f.countries).map((c) => {
      if (!/^[A-Za-z]{2}$/.test(c))
        throw new BadUserInputError(p("countries"), `'${c}' is not an ISO 3166-1 alpha-2 code`);
      return c.toUpperCase();
    });
    conds.push(Prisma.sql`g.country = ANY(${countries}::bpchar[])`);
  }
  if (f.protocols != null) {
    const known: readonly string[] = PROTOCOL_IDS;
    const protocols = list(p("protocols"), f.protocols).map((x) => {
      if (!known.includes(x))
        throw new BadUserInputError(
          p("protocols"),
          `unknown protocol '${x}' (known: ${known.join(", ")})`,
        );
      return x;
    });
    conds.push(Prisma.sql`g.protocol = ANY(${protocols}::text[])`);
  }
  if (f.tagsAll != null)
    conds.push(
      Prisma.sql`g.keywords @> ${list(p("tagsAll"), f.tagsAll).map((t) => text(p("tagsAll"), t))}::text[]`,
    );
  if (f.tagsAny != null)
    conds.push(
      Prisma.sql`g.keywords && ${list(p("tagsAny"), f.tagsAny).map((t) => text(p("tagsAny"), t))}::text[]`,
    );
  if (f.playersMin != null)
    conds.push(Prisma.sql`g.players >= ${count(p("playersMin"), f.playersMin)}`);
  if (f.playersMax != null) {
    const max = count(p("playersMax"), f.playersMax);
    if (f.playersMin != null && max < f.playersMin)
      throw new BadUserInputError(p("playersMax"), "is below filter.playersMin");
    conds.push(Prisma.sql`g.players <= ${max}`);
  }
  if (f.notEmpty === true) conds.push(Prisma.sql`g.players > 0`);
  if (f.notFull === true) conds.push(Prisma.sql`g.players < g.max_players`);
  if (f.hasBots != null)
    conds.push(f.hasBots ? Prisma.sql`g.bots > 0` : Prisma.sql`COALESCE(g.bots, 0) = 0`);
  if (f.password != null) conds.push(Prisma.sql`g.password_protected = ${f.password}`);
  if (f.vac != null) conds.push(Prisma.sql`g.vac_secured = ${f.vac}`);
  if (f.dedicated != null) conds.push(Prisma.sql`g.dedicated = ${f.dedicated}`);
  if (f.os != null) conds.push(Prisma.sql`g.os = ${f.os}`);
  if (f.statuses != null)
    conds.push(
      Prisma.sql`g.status = ANY(${[...list(p("statuses"), f.statuses)]}::"GameServerStatus"[])`,
    );
  if (f.address != null) {
    const a = parseAddressOrCidr(p("address"), f.address);
    conds.push("ip" in a ? Prisma.sql`g.ip = ${a.ip}::inet` : Prisma.sql`g.ip <<= ${a.cidr}::inet`);
  }
  if (f.sourceId != null) conds.push(Prisma.sql`g.source_id = ${count(p("sourceId"), f.sourceId)}`);
  if (f.lastSeenWithinSeconds != null) {
    const s = f.lastSeenWithinSeconds;
    if (!Number.isInteger(s) || s <= 0 || s > MAX_WITHIN_SECONDS)
      throw new BadUserInputError(
        p("lastSeenWithinSeconds"),
        `must be between 1 and ${MAX_WITHIN_SECONDS}`,
      );
    conds.push(
      Prisma.sql`g.last_answered_at >= ${new Date(now.getTime() - s * 1000)}::timestamptz`,
    );
  }
  return Prisma.join(conds, " AND ");
}
