/**
 * A2S answers (queryServer) → the normalised ServerStatus: the one mapping, used by the protocol registry
 * and by the crawler's A2S querier alike. Decoded values are taken as they are; only words change, and
 * where two readings were possible the rules below say which one holds and why.
 */
import type { ServerStatus, StatusPlayer, StatusRule } from "../status";
import type { Player } from "./a2s-player";
import type { Rule } from "./a2s-rules";
import type { ServerQueryResult } from "./client";

const OS: Record<string, ServerStatus["os"]> = { l: "linux", w: "windows", m: "mac", o: "mac" };
const SERVER_TYPE: Record<string, "dedicated" | "listen" | "proxy"> = {
  d: "dedicated",
  l: "listen",
  p: "proxy",
};

/**
 * The low 24 bits of the 64-bit game id are the app id (the 16-bit field is 0 for many games); a game id
 * whose low bits are 0 says nothing about the app, so the 16-bit field stands then.
 */
function appIdOf(appId: number, gameId: string | undefined): number {
  if (gameId !== undefined && /^\d+$/.test(gameId)) {
    const fromGameId = Number(BigInt(gameId) & 0xffffffn);
    if (fromGameId > 0) return fromGameId;
  }
  return appId;
}

/**
 * The players as the status lists them. Optional fields are set only when sent, on an object made with the
 * three that always are: an object spread per optional field made three objects per player (a crawl maps
 * every answer; bench/crawl/answer-status.ts).
 */
function statusPlayers(players: readonly Player[]): StatusPlayer[] {
  const out: StatusPlayer[] = [];
  for (const p of players) {
    const entry: StatusPlayer = { name: p.name, score: p.score, durationSeconds: p.duration };
    if (p.deaths !== undefined) entry.deaths = p.deaths;
    if (p.money !== undefined) entry.money = p.money;
    out.push(entry);
  }
  return out;
}

/**
 * The rules as the status lists them: name and value. The decoder's own list when none of its rules carries
 * the exact bytes beside them (rules that are not valid UTF-8), as those would be the only fields to drop.
 */
function statusRules(rules: Rule[]): StatusRule[] {
  for (const r of rules) {
    if (r.nameHex !== undefined || r.valueHex !== undefined)
      return rules.map((rule) => ({ name: rule.name, value: rule.value }));
  }
  return rules;
}

/**
 * The status of a server that answered A2S_INFO; null when it did not (PLAYER / RULES without INFO say
 * nothing of the server: the caller reports `result.errors.info` instead of an empty status).
 */
export function serverQueryToStatus(result: ServerQueryResult): ServerStatus | null {
  if (result.info === null) return null;
  const info = result.info.info;
  const source = info.type === "source" ? info : null;
  const serverType = info.serverType.toLowerCase();
  return {
    protocol: "source",
    name: info.name,
    map: info.map,
    folder: info.folder,
    game: info.game,
    appId: source ? appIdOf(source.appId, source.gameId) : null,
    gameId: source?.gameId ?? null,
    players: info.players,
    maxPlayers: info.maxPlayers,
    bots: info.bots,
    passwordProtected: info.visibility === 1,
    vacSecured: info.vac === 1,
    // A SourceTV proxy (or an unknown type byte) is neither a dedicated nor a listen server: unknown.
    dedicated: serverType === "d" ? true : serverType === "l" ? false : null,
    os: OS[info.environment.toLowerCase()] ?? null,
    version: source?.version ?? null,
    // Tags are filter keys: "secure, hltv" means the tags "secure" and "hltv".
    keywords: (source?.keywords ?? "")
      .split(",")
      .map((k) => k.trim())
      .filter((k) => k !== ""),
    gamePort: source?.port ?? null,
    steamId: source?.steamId ?? null,
    playerList: statusPlayers(result.players?.players ?? []),
    rules: statusRules(result.rules?.rules ?? []),
    raw: null,
    pingMs: result.pingMs,
    serverType: SERVER_TYPE[serverType] ?? null,
    // Always present (null without SourceTV), so every Source status has the same shape.
    tvPort: source?.tvPort ?? null,
    tvName: source?.tvName ?? null,
  };
}
