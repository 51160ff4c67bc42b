/**
 * Row → API object, for Prisma's rows and the list's own statement (server-list.ts) alike. The JSON
 * columns are read defensively: old rows may predate a field. The list's rows hold only the columns
 * of the fields the query asks for; the fields of the others are left undefined and never read.
 */
import { toId } from "../../shared/ids";
import {
  FakeReason,
  GameServer,
  GameServerStatus,
  Player,
  PlayerCountSource,
  RawValue,
  Rule,
  ServerOs,
} from "./game-server.type";
import type { ServerRow } from "./server-list";

const OS_VALUES = new Set<string>(Object.values(ServerOs));

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

const numOrNull = (v: unknown): number | null =>
  typeof v === "number" && Number.isFinite(v) ? v : null;
const strOrNull = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function toPlayers(json: unknown): Player[] {
  if (!Array.isArray(json)) return [];
  const players: Player[] = [];
  for (const item of json) {
    const p = asRecord(item);
    if (!p) continue;
    players.push(
      Object.assign(new Player(), {
        name: strOrNull(p["name"]) ?? "",
        score: numOrNull(p["score"]) === null ? null : Math.trunc(p["score"] as number),
        durationSeconds: numOrNull(p["durationSeconds"]),
        pingMs: numOrNull(p["pingMs"]),
        team: strOrNull(p["team"]),
      }),
    );
  }
  return players;
}

export function toRules(json: unknown): Rule[] {
  if (!Array.isArray(json)) return [];
  const rules: Rule[] = [];
  for (const item of json) {
    const r = asRecord(item);
    if (r && typeof r["name"] === "string")
      rules.push(
        Object.assign(new Rule(), { name: r["name"], value: strOrNull(r["value"]) ?? "" }),
      );
  }
  return rules;
}

/** The stored raw key/values (an object, in the server's order) as a list; null when there are none. */
export function toRawValues(json: unknown): RawValue[] | null {
  const record = asRecord(json);
  if (!record) return null;
  return Object.entries(record).map(([key, value]) =>
    Object.assign(new RawValue(), {
      key,
      value: typeof value === "string" ? value : JSON.stringify(value),
    }),
  );
}

export function toGameServer(row: ServerRow): GameServer {
  return Object.assign(new GameServer(), {
    id: toId(row.id),
    address: row.address,
    queryPort: row.queryPort,
    gamePort: row.gamePort,
    protocol: row.protocol,
    region: row.region,
    country: row.country?.trim() ?? null,
    status: row.status as GameServerStatus,
    name: row.name,
    map: row.map,
    folder: row.folder,
    game: row.game,
    appId: row.appId,
    gameId: row.gameId,
    players: row.players,
    playersSource: row.playersSource as PlayerCountSource | null,
    maxPlayers: row.maxPlayers,
    bots: row.bots,
    passwordProtected: row.passwordProtected,
    vacSecured: row.vacSecured,
    dedicated: row.dedicated,
    os: row.os != null && OS_VALUES.has(row.os) ? (row.os as ServerOs) : null,
    version: row.version,
    keywords: row.keywords,
    steamId: row.steamId,
    pingMs: row.pingMs,
    playerList: toPlayers(row.playerList),
    rules: toRules(row.rules),
    raw: toRawValues(row.raw),
    firstSeenAt: row.firstSeenAt,
    lastListedAt: row.lastListedAt,
    lastQueriedAt: row.lastQueriedAt,
    lastAnsweredAt: row.lastAnsweredAt,
    lastError: row.lastError,
    suspectedFake: row.suspectedFake,
    fakeReasons: row.fakeReasons?.map((r) => FakeReason[r]),
    isRelay: row.isRelay,
    notQueryable: row.notQueryable,
    hidden: row.hidden,
    managementRegistered: row.managementRegistered,
    sourceId: row.sourceId,
  });
}
