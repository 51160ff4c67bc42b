/**
 * Doom 3 family (`getInfo` with a challenge → `infoResponse`): Doom 3, Quake 4, Prey, ETQW.
 * Codec: legacy/doom3.ts.
 */
import { randomInt } from "node:crypto";
import { onlyDatagram } from "../adapter";
import type { ProtocolModule, ProtocolQueryOptions, ServedState } from "../adapter";
import { decodeDoom3Response, encodeDoom3InfoRequest, encodeDoom3Response } from "../legacy/doom3";
import type { Doom3Response } from "../legacy/doom3";
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
import { quirksFrom, rawKey as key } from "../legacy/quirks";
import type { QuirkEntry } from "../legacy/quirks";
import { kv, startsWith } from "../legacy/serve-kit";
import { lookupKey, parseBoolOrNull, toRecord } from "../legacy/text";
import type { ServerStatus, StatusPlayer } from "../status";
import type { ServerAddress } from "../types";

/** Per-game corrections, first match wins (captures named where one shows the quirk). */
export const QUIRKS: readonly QuirkEntry[] = [
  // Quake 4 colours ^c### and ^i… (d3-quake4-1).
  {
    quirks: { game: "quake4", colors: "quake4", encoding: "latin1", gameName: "Quake 4" },
    matches: (raw) => key(raw, "si_version").startsWith("Quake4"),
  },
  // ETQW (d3-etqw-*).
  {
    quirks: {
      game: "etqw",
      colors: "idtech",
      encoding: "latin1",
      gameName: "Enemy Territory: Quake Wars",
    },
    matches: (raw) => key(raw, "si_version").startsWith("ETQW"),
  },
  {
    quirks: { game: "doom3", colors: "idtech", encoding: "latin1", gameName: "Doom 3" },
    matches: (raw) => key(raw, "si_version").startsWith("DOOM"),
  },
  {
    quirks: { game: "prey", colors: "idtech", encoding: "latin1", gameName: "Prey" },
    matches: (raw) => /^prey/i.test(key(raw, "si_version")),
  },
];

/** Doom 3 family. */
export function doom3ToStatus(response: Doom3Response): ServerStatus {
  const latinRaw = toRecord(response.info);
  const quirks = quirksFrom(QUIRKS, latinRaw);
  const text = textFor(quirks);
  const raw = toRecord(recodePairs(response.info, text));
  const k = (...names: string[]): string | undefined => lookupKey(raw, ...names);
  const playerList: StatusPlayer[] = response.players.map((p) => {
    const playerRaw: Record<string, string> = {
      id: String(p.id),
      name: text.raw(p.name),
      ping: String(p.pingMs),
    };
    if (p.clanTag !== null) playerRaw.clanTag = text.raw(p.clanTag);
    if (p.rate !== null) playerRaw.rate = String(p.rate);
    if (p.isBot !== null) playerRaw.bot = p.isBot ? "1" : "0";
    return {
      name: text.clean(p.name),
      score: null,
      durationSeconds: null,
      pingMs: p.pingMs,
      raw: playerRaw,
    };
  });
  // ETQW reports the map as maps/<name>.entities.
  const map = (k("si_map") ?? "").replace(/^maps\//, "").replace(/\.entities$/, "");
  const anyBotFlag = response.players.some((p) => p.isBot !== null);
  return {
    ...emptyStatus("doom3"),
    name: text.clean(k("si_name") ?? ""),
    map: text.clean(map),
    folder: nullIfEmpty(k("fs_game")) ?? nullIfEmpty(k("gamename")),
    game: quirks.gameName ?? nullIfEmpty(k("gamename")),
    players: response.players.length,
    maxPlayers: intOr(k("si_maxPlayers"), 0),
    bots:
      anyBotFlag || response.etqw !== null
        ? response.players.filter((p) => p.isBot === true).length
        : null,
    passwordProtected: parseBoolOrNull(k("si_usepass", "si_needPass")),
    dedicated: parseBoolOrNull(k("net_serverDedicated")),
    version: nullIfEmpty(k("si_version")),
    playerList,
    rules: rulesOf(recodePairs(response.info, text)),
    raw,
  };
}

/** Doom 3 family `getInfo` with a random 4-byte challenge the server echoes. */
export function queryDoom3(
  address: ServerAddress,
  options: LegacyQueryOptions = {},
): Promise<LegacyQueryResult<Doom3Response>> {
  let challenge = randomInt(-0x80000000, 0x7fffffff);
  if (challenge === -1) challenge = 1; // FFFFFFFF is ETQW's marker word
  const echo = Buffer.alloc(4);
  echo.writeInt32LE(challenge);
  return withSession(address, options, (session, budget) =>
    collect(
      session,
      encodeDoom3InfoRequest(challenge),
      budget,
      single((datagram) => {
        const reply = decodeDoom3Response(datagram);
        return reply.challenge.equals(echo) ? reply : undefined;
      }),
    ),
  );
}

/** The server side: `getInfo` answered with its challenge echoed (at most 32 players, as Doom 3 allows). */
function answer(request: Buffer, s: ServedState): Buffer[] | null {
  if (!startsWith(request, Buffer.from([0xff, 0xff])) || request.length < 2 + 8 + 4) return null;
  const command = request.subarray(2, request.indexOf(0, 2)).toString("latin1");
  if (command !== "getInfo") return null;
  const challenge = request.subarray(request.indexOf(0, 2) + 1, request.indexOf(0, 2) + 5);
  if (challenge.length !== 4) return null;
  return [
    encodeDoom3Response({
      header: "infoResponse",
      challenge,
      etqwExtra: null,
      protocolMajor: 1,
      protocolMinor: 41,
      sizeField: null,
      info: [
        kv("si_name", s.name),
        kv("si_map", s.map),
        kv("si_maxPlayers", s.maxPlayers),
        kv("si_usepass", s.passwordProtected),
        kv("si_version", `DOOM ${s.version}`),
        kv("gamename", "baseDOOM-1"),
        kv("fs_game", ""),
      ],
      layout: "doom3",
      players: s.playerList.slice(0, 32).map((p, id) => ({
        id,
        pingMs: p.pingMs,
        rate: 25000,
        name: p.name,
        clanTag: null,
        clanTagPosition: null,
        isBot: null,
      })),
      osMask: 7,
      etqw: null,
      playersEx: null,
      trailing: Buffer.alloc(0),
    }),
  ];
}

/** Doom 3. */
export const doom3Protocol: ProtocolModule = {
  id: "doom3",
  name: "Doom 3",
  queryStatus: async (address, options: ProtocolQueryOptions = {}) => {
    const r = await queryDoom3(address, options);
    return { ...doom3ToStatus(r.reply), pingMs: r.pingMs, ...(r.partial ? { partial: true } : {}) };
  },
  decodeStatus: (packets) => doom3ToStatus(decodeDoom3Response(onlyDatagram(packets, "doom3"))),
  quirksFor: (raw) => quirksFrom(QUIRKS, raw),
  answer,
};
