/**
 * What the older protocols' normalisation to ServerStatus shares. Text: `raw` keeps every key/value
 * as sent (colour codes kept; recoded to UTF-8 only for games that send UTF-8), display fields
 * (`name`, `map`, player names) are the clean form (family colour codes and control bytes removed).
 * Per-game corrections come from each protocol's quirk list (its module under src/protocol/protocols/).
 */
import type { ServerStatus, StatusPlayer, StatusRule } from "../status";
import { cleanText } from "./color-codes";
import type { LegacyGameQuirks } from "./quirks";
import { lookupKey, parseBoolOrNull, parseIntOrNull, toRecord } from "./text";
import type { KeyValue } from "./text";

export interface Text {
  /** Wire text in the game's real encoding, colour codes kept. */
  raw(s: string): string;
  /** Display text: colour codes of the family and control bytes removed. */
  clean(s: string): string;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 when the bytes are valid UTF-8, else the byte-faithful text (gs3-minecraft-1 sends a latin1 §). */
function recodeUtf8(latin1: string): string {
  try {
    return strictUtf8.decode(Buffer.from(latin1, "latin1"));
  } catch {
    return latin1;
  }
}

export function textFor(quirks: LegacyGameQuirks): Text {
  const raw = (s: string): string => (quirks.encoding === "utf8" ? recodeUtf8(s) : s);
  return { raw, clean: (s) => cleanText(raw(s), quirks.colors).trim() };
}

export function recodePairs(pairs: readonly KeyValue[], text: Text): KeyValue[] {
  return pairs.map(({ key, value }) => ({ key: text.raw(key), value: text.raw(value) }));
}

export function rulesOf(pairs: readonly KeyValue[]): StatusRule[] {
  const record = toRecord(pairs);
  return Object.entries(record).map(([name, value]) => ({ name, value }));
}

export function emptyStatus(protocol: ServerStatus["protocol"]): ServerStatus {
  return {
    protocol,
    name: "",
    map: "",
    folder: null,
    game: null,
    appId: null,
    gameId: null,
    players: 0,
    maxPlayers: 0,
    bots: null,
    passwordProtected: null,
    vacSecured: null,
    dedicated: null,
    os: null,
    version: null,
    keywords: [],
    gamePort: null,
    steamId: null,
    playerList: [],
    rules: [],
    raw: null,
    pingMs: null,
  };
}

export const intOr = (text: string | undefined, fallback: number): number =>
  parseIntOrNull(text) ?? fallback;

export const nullIfEmpty = (s: string | undefined): string | null =>
  s === undefined || s === "" ? null : s;

export interface TableLike {
  rows: Array<Record<string, string>>;
}

export function tablePlayers(
  players: TableLike,
  teams: TableLike,
  quirks: LegacyGameQuirks,
  text: Text,
): StatusPlayer[] {
  const teamNames = teams.rows.map((row) => text.clean(row.team_t ?? row.team ?? ""));
  return players.rows
    .filter((row) => Object.keys(row).length > 0)
    .map((row) => {
      let name = text.clean(row.player_ ?? row.name_ ?? "");
      if (quirks.trimPlayerNames === true) name = name.trim();
      let team: string | null = quirks.ignoreTeam === true ? null : nullIfEmpty(row.team_);
      if (team !== null) {
        const n = parseIntOrNull(team);
        const index = n === null ? null : n - (quirks.teamIndexBase ?? 0);
        if (index !== null && teamNames[index] !== undefined && teamNames[index] !== "")
          team = teamNames[index]!;
      }
      return {
        name,
        score: parseIntOrNull(row.score_),
        durationSeconds: null,
        pingMs: parseIntOrNull(row.ping_),
        team,
        deaths: parseIntOrNull(row.deaths_),
        raw: Object.fromEntries(Object.entries(row).map(([key, value]) => [key, text.raw(value)])),
      };
    });
}

export function gamespyServerStatus(
  protocol: "gamespy2" | "gamespy3",
  server: readonly KeyValue[],
  quirks: LegacyGameQuirks,
  text: Text,
  playerList: StatusPlayer[],
): ServerStatus {
  const raw = toRecord(recodePairs(server, text));
  const k = (...names: string[]): string | undefined => lookupKey(raw, ...names);
  return {
    ...emptyStatus(protocol),
    name: text.clean(k("hostname") ?? ""),
    map: text.clean(k(quirks.mapKey ?? "mapname", "mapname", "map") ?? ""),
    folder: nullIfEmpty(k("gamename", "game_id")),
    game: quirks.gameName ?? nullIfEmpty(k("gamename")),
    players: parseIntOrNull(k("numplayers")) ?? playerList.length,
    maxPlayers: intOr(k("maxplayers"), 0),
    passwordProtected: parseBoolOrNull(k("password")),
    dedicated: parseBoolOrNull(k("dedicated", "bf2_dedicated")),
    version: nullIfEmpty(k("gamever", "version")),
    gamePort: parseIntOrNull(k("hostport")),
    playerList,
    rules: rulesOf(recodePairs(server, text)),
    raw,
  };
}
