/**
 * GameSpy v1 (`\\status\\`, backslash key/values over several datagrams until `\\final\\`): Unreal
 * Engine 1 and 2 games (UT99, Unreal, Rune, Deus Ex), BF1942, MOHAA, Operation Flashpoint, AvP2.
 * Codec: legacy/gamespy1.ts.
 */
import { onlyDatagram } from "../adapter";
import type { ProtocolModule, ProtocolQueryOptions, AnswerContext, ServedState } from "../adapter";
import {
  Gamespy1Assembler,
  decodeGamespy1Datagram,
  decodeGamespy1Response,
  encodeGamespy1Request,
  groupGamespy1Pairs,
  encodeGamespy1Response,
} from "../legacy/gamespy1";
import type { Gamespy1Response } from "../legacy/gamespy1";
import { emptyStatus, intOr, nullIfEmpty, recodePairs, textFor } from "../legacy/normalise";
import { collect, withSession } from "../legacy/query-kit";
import type { Collector, LegacyQueryOptions, LegacyQueryResult } from "../legacy/query-kit";
import { DEFAULT_QUIRKS, quirksFrom, rawKey as key } from "../legacy/quirks";
import type { QuirkEntry } from "../legacy/quirks";
import { kv } from "../legacy/serve-kit";
import { lookupKey, parseBoolOrNull, parseIntOrNull, toRecord } from "../legacy/text";
import type { ServerStatus, StatusPlayer } from "../status";
import type { ServerAddress } from "../types";

/** Per-game corrections, first match wins (captures named where one shows the quirk). */
export const QUIRKS: readonly QuirkEntry[] = [
  // BF1942 playername_N, 1-based team_N into 0-based teamname_N, ghost records (gs1-bf1942-1).
  {
    quirks: {
      game: "bf1942",
      colors: "none",
      encoding: "latin1",
      gameName: "Battlefield 1942",
      teamIndexBase: 1,
      trimToNumPlayers: true,
      dedupeBy: "keyhash",
    },
    matches: (raw) => key(raw, "gamename") === "bfield1942",
  },
  // UT99 ping with a leading space, team 255 = spectator (gs1-ut99-*).
  {
    quirks: {
      game: "ut99",
      colors: "none",
      encoding: "latin1",
      gameName: "Unreal Tournament",
      spectatorTeam: "255",
    },
    matches: (raw) => key(raw, "gamename") === "ut",
  },
  // Operation Flashpoint ghost team_N (LGSL).
  {
    quirks: { game: "ofp", colors: "none", encoding: "latin1", ignoreTeam: true },
    matches: (raw) => /^(opflash|opflashr)$/i.test(key(raw, "gamename")),
  },
  // AvP2 names prefixed with `<number>~` (LGSL).
  {
    quirks: { game: "avp2", colors: "none", encoding: "latin1", namePrefix: /^[0-9]+~/ },
    matches: (raw) => key(raw, "gamename").toLowerCase() === "avp2",
  },
  // MOHAA sparse player slots (gs1-mohaa-*): nothing to correct beyond the generic rules.
  {
    quirks: {
      game: "mohaa",
      colors: "none",
      encoding: "latin1",
      gameName: "Medal of Honor: Allied Assault",
    },
    matches: (raw) => /^moh/i.test(key(raw, "gamename")),
  },
  { quirks: { ...DEFAULT_QUIRKS, game: "gamespy", colors: "none" }, matches: () => true },
];

/** GameSpy v1 (\status\ reply). */
export function gamespy1ToStatus(response: Gamespy1Response): ServerStatus {
  const grouped = groupGamespy1Pairs(response.pairs);
  const quirks = quirksFrom(QUIRKS, grouped.info);
  const text = textFor(quirks);
  const raw = toRecord(recodePairs(response.pairs, text));
  const info = toRecord(
    recodePairs(
      Object.entries(grouped.info).map(([key, value]) => ({ key, value })),
      text,
    ),
  );
  const k = (...names: string[]): string | undefined => lookupKey(info, ...names);
  const numPlayers = parseIntOrNull(k("numplayers"));
  let records = grouped.players;
  if (quirks.dedupeBy !== undefined) {
    const seen = new Set<string>();
    records = records.filter((r) => {
      const id = r.fields[quirks.dedupeBy!];
      if (id === undefined || id === "") return true;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  }
  if (quirks.trimToNumPlayers === true && numPlayers !== null)
    records = records.slice(0, numPlayers);
  const teamNames = new Map(grouped.teams.map((t) => [t.index, text.clean(t.name)]));
  const playerList: StatusPlayer[] = records.map((r) => {
    const f = r.fields;
    let name = text.clean(f.player ?? f.playername ?? f.name ?? "");
    if (quirks.namePrefix !== undefined) name = name.replace(quirks.namePrefix, "");
    let team: string | null = quirks.ignoreTeam === true ? null : nullIfEmpty(f.team);
    if (team !== null && quirks.teamIndexBase !== undefined) {
      const n = parseIntOrNull(team);
      if (n !== null) team = teamNames.get(n - quirks.teamIndexBase) ?? team;
    }
    if (team !== null && team === quirks.spectatorTeam) team = "spectator";
    const playerRaw = Object.fromEntries(
      Object.entries(f).map(([key, value]) => [key, text.raw(value)]),
    );
    return {
      name,
      score: parseIntOrNull(f.score ?? f.frags),
      durationSeconds: null,
      pingMs: parseIntOrNull(f.ping),
      team,
      deaths: parseIntOrNull(f.deaths),
      raw: playerRaw,
    };
  });
  return {
    ...emptyStatus("gamespy1"),
    name: text.clean(k("hostname") ?? ""),
    map: text.clean(k(quirks.mapKey ?? "mapname", "mapname") ?? ""),
    folder: nullIfEmpty(k("gamename")),
    game: quirks.gameName ?? nullIfEmpty(k("gamename")),
    players: numPlayers ?? playerList.length,
    maxPlayers: intOr(k("maxplayers"), 0),
    passwordProtected: parseBoolOrNull(k("password")),
    dedicated: parseBoolOrNull(k("dedicated")),
    version: nullIfEmpty(k("gamever")),
    gamePort: parseIntOrNull(k("hostport")),
    playerList,
    rules: Object.entries(info).map(([name, value]) => ({ name, value })),
    raw,
    ...(response.complete ? {} : { partial: true }),
  };
}

/** GameSpy v1 `\status\`: datagrams collected until `\final\` and every datagram before it arrived. */
export function queryGamespy1(
  address: ServerAddress,
  options: LegacyQueryOptions = {},
): Promise<LegacyQueryResult<Gamespy1Response>> {
  // One assembler per query serial: a re-send is answered under a new serial.
  const bySerial = new Map<number | null, Gamespy1Assembler>();
  let best: Gamespy1Assembler | null = null;
  const collector: Collector<Gamespy1Response> = {
    accept: (datagram) => datagram[0] === 0x5c,
    push: (datagram) => {
      const serial = decodeGamespy1Datagram(datagram).queryId;
      let assembler = bySerial.get(serial);
      if (assembler === undefined) {
        if (bySerial.size >= 8) return false;
        assembler = new Gamespy1Assembler();
        bySerial.set(serial, assembler);
      }
      const complete = assembler.push(datagram);
      if (complete || best === null || assembler.datagramCount > best.datagramCount)
        best = assembler;
      return complete;
    },
    hasData: () => best !== null,
    result: () => best!.result(),
  };
  return withSession(address, options, (session, budget) =>
    collect(session, encodeGamespy1Request(["status"]), budget, collector),
  );
}

/** The server side: `\\status\\` answered in as many datagrams as it takes, under a new serial each time. */
function answer(request: Buffer, s: ServedState, context: AnswerContext): Buffer[] | null {
  if (request[0] !== 0x5c) return null;
  const pairs = [
    kv("gamename", s.folder),
    kv("gamever", s.version),
    kv("hostname", s.name),
    kv("hostport", s.gamePort),
    kv("mapname", s.map),
    kv("gametype", "dm"),
    kv("numplayers", s.players),
    kv("maxplayers", s.maxPlayers),
    kv("password", s.passwordProtected),
    ...s.playerList.flatMap((p, i) => [
      kv(`player_${i}`, p.name.replace(/\\/g, "/")),
      kv(`frags_${i}`, p.score),
      kv(`ping_${i}`, p.pingMs),
      kv(`team_${i}`, i % 2),
    ]),
    ...s.rules.map((r) => kv(r.name, r.value.replace(/\\/g, "/"))),
  ];
  return encodeGamespy1Response(pairs, {
    queryId: context.nextQueryId(),
    maxDatagramBytes: context.maxDatagramBytes,
  });
}

/** GameSpy v1. */
export const gamespy1Protocol: ProtocolModule = {
  id: "gamespy1",
  name: "GameSpy v1",
  queryStatus: async (address, options: ProtocolQueryOptions = {}) => {
    const r = await queryGamespy1(address, options);
    return {
      ...gamespy1ToStatus(r.reply),
      pingMs: r.pingMs,
      ...(r.partial ? { partial: true } : {}),
    };
  },
  decodeStatus: (packets) => {
    onlyDatagram(packets, "gamespy1");
    return gamespy1ToStatus(decodeGamespy1Response(packets));
  },
  quirksFor: (raw) => quirksFrom(QUIRKS, raw),
  answer,
};
