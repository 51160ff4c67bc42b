/**
 * Quake 3 family (`getstatus` → `statusResponse`, also `getinfo` → `infoResponse`): ioquake3, CoD 1/2/4,
 * Enemy Territory, Jedi Knight, SOF2, Warsow, Xonotic/Nexuis (DarkPlaces), MOHAA in Quake 3 mode. The
 * Quake family normalisation here is shared with Quake 2 (quake2.ts). Codec: legacy/quake3.ts.
 */
import { randomBytes } from "node:crypto";
import { onlyDatagram } from "../adapter";
import type { ProtocolModule, ProtocolQueryOptions, ServedState } from "../adapter";
import {
  emptyStatus,
  intOr,
  nullIfEmpty,
  recodePairs,
  rulesOf,
  textFor,
} from "../legacy/normalise";
import {
  decodeQuakeResponse,
  encodeQuake3StatusRequest,
  QUAKE3_INFO_RESPONSE,
  encodeQuakeResponse,
} from "../legacy/quake3";
import type { QuakeResponse } from "../legacy/quake3";
import { WHOLE_DATAGRAM, collect, single, withSession } from "../legacy/query-kit";
import type { LegacyQueryOptions, LegacyQueryResult } from "../legacy/query-kit";
import { quirksFrom, rawKey as key } from "../legacy/quirks";
import type { LegacyGameQuirks, QuirkEntry } from "../legacy/quirks";
import { OOB, kv, startsWith } from "../legacy/serve-kit";
import { lookupKey, parseBoolOrNull, parseIntOrNull, toRecord } from "../legacy/text";
import type { ServerStatus, StatusPlayer } from "../status";
import type { ServerAddress } from "../types";

/** Per-game corrections, first match wins (captures named where one shows the quirk). */
export const QUIRKS: readonly QuirkEntry[] = [
  // CoD 1 and UO also use ^^ + a doubled digit (q3-cod-1, q3-coduo-*).
  {
    quirks: { game: "cod", colors: "cod1", encoding: "latin1", gameName: "Call of Duty" },
    matches: (raw) =>
      key(raw, "gamename") === "main" || key(raw, "gamename").startsWith("CoD:United Offensive"),
  },
  // SOF2 1.01+ sends score ping team "name" (q3-sof2-2).
  {
    quirks: {
      game: "sof2",
      colors: "idtech",
      encoding: "latin1",
      quakePlayerLine: "score-ping-team",
    },
    matches: (raw) => key(raw, "gamename").toLowerCase() === "sof2mp",
  },
  // Warsow / qfusion put the team after the name (q3-warsow-*).
  {
    quirks: { game: "warsow", colors: "idtech", encoding: "latin1", quakeTeamAfterName: true },
    matches: (raw) => /^(warsow|warfork)$/i.test(key(raw, "gamename")),
  },
  // DarkPlaces colours and score ping team "name".
  {
    quirks: {
      game: "darkplaces",
      colors: "darkplaces",
      encoding: "utf8",
      quakePlayerLine: "score-ping-team",
    },
    matches: (raw) => /^(xonotic|nexuiz)$/i.test(key(raw, "gamename")),
  },
  // MOHAA in Quake 3 mode sends `<ping> "<name>"` only.
  {
    quirks: { game: "mohaa-q3", colors: "idtech", encoding: "latin1", quakePlayerLine: "ping" },
    matches: (raw) => /^mohaa|^mohpa/i.test(key(raw, "gamename")),
  },
];

/** Quake 2 / Quake 3 family (statusResponse, infoResponse, print). */
export function quakeToStatus(
  response: QuakeResponse,
  protocol: "quake2" | "quake3",
  quirksFor: (raw: Readonly<Record<string, string>>) => LegacyGameQuirks,
): ServerStatus {
  const latinRaw = toRecord(response.info);
  const quirks = quirksFor(latinRaw);
  const text = textFor(quirks);
  const raw = toRecord(recodePairs(response.info, text));
  const k = (...names: string[]): string | undefined => lookupKey(raw, ...names);
  const playerList: StatusPlayer[] = response.players.map((line) => {
    const [a, b, c] = line.numbers;
    const layout = quirks.quakePlayerLine ?? "score-ping";
    const score = layout === "ping" ? null : (a ?? null);
    const pingMs = layout === "ping" ? (a ?? null) : (b ?? null);
    let team: string | null = null;
    if (layout === "score-ping-team" && c !== undefined) team = String(c);
    if (quirks.quakeTeamAfterName === true && line.afterName !== "") team = line.afterName;
    const playerRaw: Record<string, string> = {
      name: text.raw(line.name),
      numbers: line.numbers.join(" "),
    };
    if (line.afterName !== "") playerRaw.afterName = text.raw(line.afterName);
    return {
      name: text.clean(line.name),
      score,
      durationSeconds: null,
      pingMs,
      team,
      raw: playerRaw,
    };
  });
  const isInfo = response.header === QUAKE3_INFO_RESPONSE;
  const humans = parseIntOrNull(k("g_humanplayers"));
  const clients = parseIntOrNull(k("clients"));
  return {
    ...emptyStatus(protocol),
    name: text.clean(k("sv_hostname", "hostname") ?? ""),
    map: text.clean(k("mapname") ?? ""),
    folder: nullIfEmpty(k("fs_game", "game", "gamename")?.trim()),
    game: quirks.gameName ?? nullIfEmpty(k("gamename")?.trim()),
    players: isInfo ? (clients ?? 0) : playerList.length,
    maxPlayers: intOr(k("sv_maxclients", "maxclients"), 0),
    // Only getinfo says how many clients are bots (clients - g_humanplayers); ping 0 is a guess we do not make.
    bots: isInfo && humans !== null && clients !== null ? Math.max(0, clients - humans) : null,
    passwordProtected: parseBoolOrNull(k("g_needpass", "pswrd", "needpass")),
    dedicated: parseBoolOrNull(k("dedicated")),
    version: nullIfEmpty(k("version", "shortversion")),
    playerList,
    rules: rulesOf(recodePairs(response.info, text)),
    raw,
  };
}

export interface Quake3QueryOptions extends LegacyQueryOptions {
  /** A byte after the OOB header: MOHAA in Quake 3 mode wants 02 (LGSL, qstat). */
  prefixByte?: number;
}

/** Quake 3 `getstatus` with a challenge the server echoes (stale answers are dropped). */
export function queryQuake3(
  address: ServerAddress,
  options: Quake3QueryOptions = {},
): Promise<LegacyQueryResult<QuakeResponse>> {
  const challenge = randomBytes(6).toString("hex");
  const request = encodeQuake3StatusRequest(
    options.prefixByte === undefined
      ? { challenge }
      : { challenge, prefixByte: options.prefixByte },
  );
  return withSession(address, options, (session, budget) =>
    collect(
      session,
      request,
      budget,
      single((datagram) => {
        const reply = decodeQuakeResponse(datagram);
        const echo = lookupKey(toRecord(reply.info), "challenge");
        return echo === undefined || echo === "" || echo === challenge ? reply : undefined;
      }),
      1,
      WHOLE_DATAGRAM,
    ),
  );
}

/** The server side: `getstatus` / `getinfo` answered from the served state. */
function answer(request: Buffer, s: ServedState): Buffer[] | null {
  const text = startsWith(request, OOB)
    ? request
        .subarray(4)
        .toString("latin1")
        .replace(/[\0\n]+$/, "")
    : "";
  const [command, challenge] = text.split(" ");
  if (command !== "getstatus" && command !== "getinfo") return null;
  const info = [
    kv("sv_hostname", s.name),
    kv("mapname", s.map),
    kv("sv_maxclients", s.maxPlayers),
    kv("g_needpass", s.passwordProtected),
    kv("gamename", s.folder),
    kv("version", s.version),
    kv("challenge", challenge ?? ""),
  ];
  if (command === "getinfo") {
    info.push(kv("clients", s.players), kv("g_humanplayers", s.players - s.bots));
    return [encodeQuakeResponse({ header: "infoResponse", prefixByte: null, info, players: [] })];
  }
  const players = s.playerList.map((p) => ({
    numbers: [p.score, p.pingMs],
    name: p.name,
    afterName: "",
  }));
  return [encodeQuakeResponse({ header: "statusResponse", prefixByte: null, info, players })];
}

/** Quake 3. */
export const quake3Protocol: ProtocolModule = {
  id: "quake3",
  name: "Quake 3",
  queryStatus: async (address, options: ProtocolQueryOptions = {}) => {
    const r = await queryQuake3(address, options);
    return {
      ...quakeToStatus(r.reply, "quake3", quirksOf),
      pingMs: r.pingMs,
      ...(r.partial ? { partial: true } : {}),
    };
  },
  decodeStatus: (packets) =>
    quakeToStatus(decodeQuakeResponse(onlyDatagram(packets, "quake3")), "quake3", quirksOf),
  quirksFor: (raw) => quirksFrom(QUIRKS, raw),
  answer,
};

function quirksOf(raw: Readonly<Record<string, string>>): LegacyGameQuirks {
  return quirksFrom(QUIRKS, raw);
}
