/**
 * GameSpy v2 (`FE FD 00` + request id + section flags, one datagram with every section): Halo, Arma,
 * SWAT 4, America's Army. Its table normalisation is shared with GameSpy v3 (gamespy3.ts), whose
 * servers may answer in this layout. Codec: legacy/gamespy2.ts.
 */
import { onlyDatagram } from "../adapter";
import type { ProtocolModule, ProtocolQueryOptions, ServedState } from "../adapter";
import { ProtocolError } from "../errors";
import {
  ALL_SECTIONS,
  decodeGamespy2Response,
  encodeGamespy2Request,
  encodeGamespy2Response,
} from "../legacy/gamespy2";
import type { Gamespy2Response, Gamespy2Table } from "../legacy/gamespy2";
import { gamespyServerStatus, tablePlayers, textFor } from "../legacy/normalise";
import type { TableLike } from "../legacy/normalise";
import { collect, newRequestId, single, withSession } from "../legacy/query-kit";
import type { LegacyQueryOptions, LegacyQueryResult } from "../legacy/query-kit";
import { DEFAULT_QUIRKS, quirksFrom, rawKey as key } from "../legacy/quirks";
import type { QuirkEntry } from "../legacy/quirks";
import { gamespyServerPairs } from "../legacy/serve-kit";
import { toRecord } from "../legacy/text";
import type { LegacyDecodeOptions } from "../legacy/text";
import type { ServerStatus } from "../status";
import type { ServerAddress } from "../types";

/** America's Army uses Unreal 2 colours (0x1B + RGB); it answers GameSpy v2 and v3 alike. */
export const AMERICAS_ARMY: QuirkEntry = {
  quirks: {
    game: "americasarmy",
    colors: "unreal2",
    encoding: "latin1",
    gameName: "America's Army",
  },
  matches: (raw) => key(raw, "gamename") === "armygame",
};

/** Per-game corrections, first match wins (captures named where one shows the quirk). */
export const QUIRKS: readonly QuirkEntry[] = [
  // Halo control bytes in names (stripped as controls), 0-based team_ (gs2-halo-*).
  {
    quirks: {
      game: "halo",
      colors: "none",
      encoding: "latin1",
      gameName: "Halo",
      teamIndexBase: 0,
    },
    matches: (raw) => key(raw, "gamename") === "halor",
  },
  // Arma keeps the map in `mission`, empty team_ values (gs2-arma-*).
  {
    quirks: {
      game: "arma",
      colors: "none",
      encoding: "latin1",
      gameName: "ARMA",
      mapKey: "mission",
      ignoreTeam: true,
    },
    matches: (raw) => key(raw, "gamename") === "armedass",
  },
  AMERICAS_ARMY,
  { quirks: { ...DEFAULT_QUIRKS, game: "gamespy", colors: "none" }, matches: () => true },
];

function gs2TableRows(table: Gamespy2Table | null): TableLike {
  if (table === null) return { rows: [] };
  return {
    rows: table.rows.map((row) =>
      Object.fromEntries(table.fields.map((f, i) => [f, row[i] ?? ""])),
    ),
  };
}

/** GameSpy v2: the server reply and the players/teams reply may be separate responses. */
export function gamespy2ToStatus(responses: readonly Gamespy2Response[]): ServerStatus {
  const server = responses.flatMap((r) => r.server ?? []);
  const quirks = quirksFrom(QUIRKS, toRecord(server));
  const text = textFor(quirks);
  const players = responses.map((r) => r.players).find((t) => t !== null) ?? null;
  const teams = responses.map((r) => r.teams).find((t) => t !== null) ?? null;
  return gamespyServerStatus(
    "gamespy2",
    server,
    quirks,
    text,
    tablePlayers(gs2TableRows(players), gs2TableRows(teams), quirks, text),
  );
}

/** A GameSpy v2 reply whose request is unknown: players+teams when that reads cleanly, else all sections. */
export function decodeGamespy2Unknown(
  packet: Buffer,
  options: LegacyDecodeOptions = {},
): Gamespy2Response {
  if (packet[5] === 0x00) {
    try {
      const d = decodeGamespy2Response(
        packet,
        { server: false, players: true, teams: true },
        options,
      );
      if (d.trailingBytes === 0) return d;
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
    }
  }
  return decodeGamespy2Response(packet, ALL_SECTIONS, options);
}

/** GameSpy v2: one `FF FF FF` query, one datagram with every section. */
export function queryGamespy2(
  address: ServerAddress,
  options: LegacyQueryOptions = {},
): Promise<LegacyQueryResult<Gamespy2Response>> {
  const requestId = newRequestId();
  return withSession(address, options, (session, budget) =>
    collect(
      session,
      encodeGamespy2Request(requestId, ALL_SECTIONS),
      budget,
      single((datagram) => {
        if (!datagram.subarray(1, 5).equals(requestId)) return undefined;
        return decodeGamespy2Response(datagram, ALL_SECTIONS, { requestId });
      }),
    ),
  );
}

/** The server side: the sections the request asks for, in one datagram. */
function answer(request: Buffer, s: ServedState): Buffer[] | null {
  if (request.length < 10 || request[0] !== 0xfe || request[1] !== 0xfd || request[2] !== 0x00)
    return null;
  const requestId = Buffer.from(request.subarray(3, 7));
  const [sv, pl, tm] = [request[7] !== 0, request[8] !== 0, request[9] !== 0];
  const players = s.playerList;
  return [
    encodeGamespy2Response({
      requestId,
      server: sv ? gamespyServerPairs(s) : null,
      players: pl
        ? {
            countField: players.length,
            fields: ["player_", "score_", "ping_", "team_"],
            rows: players.map((p, i) => [p.name, String(p.score), String(p.pingMs), String(i % 2)]),
          }
        : null,
      teams: tm
        ? {
            countField: 2,
            fields: ["team_t", "score_t"],
            rows: [
              ["Red", "0"],
              ["Blue", "0"],
            ],
          }
        : null,
      trailingBytes: 0,
    }),
  ];
}

/** GameSpy v2. */
export const gamespy2Protocol: ProtocolModule = {
  id: "gamespy2",
  name: "GameSpy v2",
  queryStatus: async (address, options: ProtocolQueryOptions = {}) => {
    const r = await queryGamespy2(address, options);
    return {
      ...gamespy2ToStatus([r.reply]),
      pingMs: r.pingMs,
      ...(r.partial ? { partial: true } : {}),
    };
  },
  decodeStatus: (packets) => {
    onlyDatagram(packets, "gamespy2");
    return gamespy2ToStatus(packets.map((p) => decodeGamespy2Unknown(p)));
  },
  quirksFor: (raw) => quirksFrom(QUIRKS, raw),
  answer,
};
