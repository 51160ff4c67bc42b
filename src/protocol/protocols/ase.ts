/**
 * All-Seeing Eye (`s` → `EYE1`), sent to the game port + 123 for almost every game (games.ts):
 * Multi Theft Auto, Far Cry, Chrome, Soldat and other games of the ASE era. Codec: legacy/ase.ts.
 */
import { onlyDatagram } from "../adapter";
import type { ProtocolModule, ProtocolQueryOptions, ServedState } from "../adapter";
import { decodeAseResponse, encodeAseRequest, encodeAseResponse } from "../legacy/ase";
import type { AseResponse } from "../legacy/ase";
import {
  emptyStatus,
  intOr,
  nullIfEmpty,
  recodePairs,
  rulesOf,
  textFor,
} from "../legacy/normalise";
import { collect, single, withSession } from "../legacy/query-kit";
import type { LegacyQueryOptions, LegacyQueryResult } from "../legacy/query-kit";
import { DEFAULT_QUIRKS, quirksFrom, rawKey as key } from "../legacy/quirks";
import type { QuirkEntry } from "../legacy/quirks";
import { kv } from "../legacy/serve-kit";
import { parseBoolOrNull, parseIntOrNull, toRecord } from "../legacy/text";
import type { ServerStatus } from "../status";
import type { ServerAddress } from "../types";

/** Per-game corrections, first match wins (captures named where one shows the quirk). */
export const QUIRKS: readonly QuirkEntry[] = [
  // MTA sends UTF-8 with colours already removed (ase-mta-1).
  {
    quirks: { game: "mta", colors: "none", encoding: "utf8", gameName: "Multi Theft Auto" },
    matches: (raw) => key(raw, "gamename") === "mta",
  },
  { quirks: { ...DEFAULT_QUIRKS, game: "ase", colors: "none" }, matches: () => true },
];

/** All-Seeing Eye. */
export function aseToStatus(response: AseResponse): ServerStatus {
  const header: Record<string, string> = {
    gamename: response.gameName,
    hostport: response.gamePort,
    hostname: response.hostname,
    gametype: response.gameType,
    map: response.map,
    version: response.version,
    password: response.password,
    numplayers: response.numPlayers,
    maxplayers: response.maxPlayers,
  };
  const quirks = quirksFrom(QUIRKS, header);
  const text = textFor(quirks);
  const rulePairs = recodePairs(response.rules, text);
  const rawHeader = Object.fromEntries(
    Object.entries(header).map(([key, value]) => [key, text.raw(value)]),
  );
  return {
    ...emptyStatus("ase"),
    name: text.clean(response.hostname),
    map: text.clean(response.map),
    folder: nullIfEmpty(response.gameName),
    game: quirks.gameName ?? nullIfEmpty(response.gameName),
    players: intOr(response.numPlayers, response.players.length),
    maxPlayers: intOr(response.maxPlayers, 0),
    passwordProtected: parseBoolOrNull(response.password),
    version: nullIfEmpty(text.raw(response.version)),
    gamePort: parseIntOrNull(response.gamePort),
    playerList: response.players.map((p) => {
      const playerRaw: Record<string, string> = {};
      for (const field of ["name", "team", "skin", "score", "ping", "time"] as const)
        if (p[field] !== undefined) playerRaw[field] = text.raw(p[field]);
      return {
        name: text.clean(p.name ?? ""),
        score: parseIntOrNull(p.score),
        durationSeconds: null,
        pingMs: parseIntOrNull(p.ping),
        team: nullIfEmpty(p.team === undefined ? undefined : text.clean(p.team)),
        raw: playerRaw,
      };
    }),
    rules: rulesOf(rulePairs),
    raw: { ...rawHeader, ...toRecord(rulePairs) },
  };
}

/** All-Seeing Eye `s` → `EYE1`, at the query port. */
export function queryAse(
  address: ServerAddress,
  options: LegacyQueryOptions = {},
): Promise<LegacyQueryResult<AseResponse>> {
  return withSession(address, options, (session, budget) =>
    collect(session, encodeAseRequest(), budget, single(decodeAseResponse)),
  );
}

/** The server side: `s` answered with the whole state (rule values cut to 200 bytes). */
function answer(request: Buffer, s: ServedState): Buffer[] | null {
  if (request.length !== 1 || request[0] !== 0x73) return null;
  return [
    encodeAseResponse({
      gameName: s.folder,
      gamePort: String(s.gamePort),
      hostname: s.name,
      gameType: "DM",
      map: s.map,
      version: s.version,
      password: s.passwordProtected ? "1" : "0",
      numPlayers: String(s.players),
      maxPlayers: String(s.maxPlayers),
      rules: s.rules.map((r) => kv(r.name, r.value.slice(0, 200))),
      players: s.playerList.map((p) => ({
        flags: 0x19,
        name: p.name,
        score: String(p.score),
        ping: String(p.pingMs),
      })),
    }),
  ];
}

/** All-Seeing Eye. */
export const aseProtocol: ProtocolModule = {
  id: "ase",
  name: "All-Seeing Eye",
  queryStatus: async (address, options: ProtocolQueryOptions = {}) => {
    const r = await queryAse(address, options);
    return { ...aseToStatus(r.reply), pingMs: r.pingMs, ...(r.partial ? { partial: true } : {}) };
  },
  decodeStatus: (packets) => aseToStatus(decodeAseResponse(onlyDatagram(packets, "ase"))),
  quirksFor: (raw) => quirksFrom(QUIRKS, raw),
  answer,
};
