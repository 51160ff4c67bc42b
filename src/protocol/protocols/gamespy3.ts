/**
 * GameSpy v3 / UT3 query (challenge `09`, then `00` with FF FF FF 01 and split replies): BF2, Crysis,
 * UT3, Minecraft (Query), and JC2MP's variant (FF FF FF 02). A server that ignores the split flag
 * answers in the GameSpy v2 layout, normalised as GameSpy v2 then marked gamespy3.
 * Codec: legacy/gamespy3.ts.
 */
import { onlyDatagram } from "../adapter";
import type { ProtocolModule, ProtocolQueryOptions, AnswerContext, ServedState } from "../adapter";
import { ProtocolError } from "../errors";
import { ALL_SECTIONS, decodeGamespy2Response } from "../legacy/gamespy2";
import type { Gamespy2Response } from "../legacy/gamespy2";
import {
  GAMESPY3_CHALLENGE,
  Gamespy3Assembler,
  decodeGamespy3ChallengeResponse,
  decodeGamespy3Response,
  decodeJc2mpResponse,
  encodeGamespy3ChallengeRequest,
  encodeGamespy3QueryRequest,
  isSplitDatagram,
  encodeGamespy3ChallengeResponse,
  encodeGamespy3Response,
} from "../legacy/gamespy3";
import type { Gamespy3Response, Jc2mpResponse } from "../legacy/gamespy3";
import { gamespyServerStatus, tablePlayers, textFor } from "../legacy/normalise";
import { collect, newRequestId, single, withSession } from "../legacy/query-kit";
import type { Budget, Collector, LegacyQueryOptions, LegacyQueryResult } from "../legacy/query-kit";
import { DEFAULT_QUIRKS, quirksFrom, rawKey as key } from "../legacy/quirks";
import type { QuirkEntry } from "../legacy/quirks";
import { gamespyServerPairs } from "../legacy/serve-kit";
import { toRecord } from "../legacy/text";
import type { ServerStatus, StatusPlayer } from "../status";
import type { ServerAddress } from "../types";
import { AMERICAS_ARMY, decodeGamespy2Unknown, gamespy2ToStatus } from "./gamespy2";

/** Per-game corrections, first match wins (captures named where one shows the quirk). */
export const QUIRKS: readonly QuirkEntry[] = [
  AMERICAS_ARMY,
  // BF2 names start with a space when the clan tag is empty; team_ is 1-based (gs3-bf2-*).
  {
    quirks: {
      game: "bf2",
      colors: "none",
      encoding: "latin1",
      gameName: "Battlefield 2",
      teamIndexBase: 1,
      trimPlayerNames: true,
    },
    matches: (raw) => /^battlefield2/.test(key(raw, "gamename")),
  },
  // UT3's map is in p1073741825 (gs3-ut3-1).
  {
    quirks: {
      game: "ut3",
      colors: "none",
      encoding: "latin1",
      gameName: "Unreal Tournament 3",
      mapKey: "p1073741825",
    },
    matches: (raw) => key(raw, "p1073741825") !== "",
  },
  // Minecraft Query: UTF-8, § colours, `map` key (gs3-minecraft-*).
  {
    quirks: {
      game: "minecraft",
      colors: "minecraft",
      encoding: "utf8",
      gameName: "Minecraft",
      mapKey: "map",
    },
    matches: (raw) => key(raw, "game_id") === "MINECRAFT",
  },
  // JC2MP sends UTF-8 (gs3-justcause2-*).
  {
    quirks: {
      game: "jc2mp",
      colors: "none",
      encoding: "utf8",
      gameName: "Just Cause 2: Multiplayer",
    },
    matches: (raw) => key(raw, "__jc2mp") === "1",
  },
  { quirks: { ...DEFAULT_QUIRKS, game: "gamespy", colors: "none" }, matches: () => true },
];

export function gamespy3ToStatus(response: Gamespy3Response): ServerStatus {
  const quirks = quirksFrom(QUIRKS, toRecord(response.server));
  const text = textFor(quirks);
  const playerList = tablePlayers(response.players, response.teams, quirks, text);
  const status = gamespyServerStatus("gamespy3", response.server, quirks, text, playerList);
  // BF2 marks bots per row (AIBot_); elsewhere bots are unknown.
  if (response.players.fields.includes("AIBot_"))
    status.bots = response.players.rows.filter((r) => r.AIBot_ === "1").length;
  return response.complete ? status : { ...status, partial: true };
}

export function jc2mpToStatus(response: Jc2mpResponse): ServerStatus {
  // The marker key only selects the JC2MP entry of the quirk table; it is not part of raw.
  const quirks = quirksFrom(QUIRKS, { ...toRecord(response.server), __jc2mp: "1" });
  const text = textFor(quirks);
  const playerList: StatusPlayer[] = response.players.map((p) => ({
    name: text.clean(p.name),
    score: null,
    durationSeconds: null,
    pingMs: p.pingMs,
    raw: { name: text.raw(p.name), steamid: p.steamId, ping: String(p.pingMs) },
  }));
  return gamespyServerStatus("gamespy3", response.server, quirks, text, playerList);
}

export type Gamespy3Reply =
  | { kind: "split"; response: Gamespy3Response }
  | { kind: "single"; response: Gamespy2Response }
  | { kind: "jc2mp"; response: Jc2mpResponse };

export interface Gamespy3QueryOptions extends LegacyQueryOptions {
  /** JC2MP's variant (`FF FF FF 02`, players after the server keys). @defaultValue false */
  jc2mp?: boolean;
}

/**
 * GameSpy v3: challenge (`09`), then the full query with split replies accepted; a server that
 * ignores the split flag answers in the GameSpy v2 layout, which is accepted too.
 */
export function queryGamespy3(
  address: ServerAddress,
  options: Gamespy3QueryOptions = {},
): Promise<LegacyQueryResult<Gamespy3Reply>> {
  return withSession(address, options, async (session, budget) => {
    // Each attempt starts again from the challenge, under a fresh request id (challenges expire).
    const attempts = budget.retries + 1;
    const step: Budget = { ...budget, retries: 0 };
    const share = 1 / (2 * attempts);
    let best: LegacyQueryResult<Gamespy3Reply> | null = null;
    for (let attempt = 1; ; attempt += 1) {
      const requestId = newRequestId();
      let challenge: LegacyQueryResult<number | null>;
      try {
        challenge = await collect(
          session,
          encodeGamespy3ChallengeRequest(requestId),
          step,
          single((datagram) => {
            if (datagram[0] !== GAMESPY3_CHALLENGE || !datagram.subarray(1, 5).equals(requestId))
              return undefined;
            return decodeGamespy3ChallengeResponse(datagram).challenge;
          }),
          share,
        );
      } catch (err) {
        // Servers of the pre-challenge SDK never answer type 09: ask without a challenge (BF2 style).
        if (!(err instanceof ProtocolError && err.code === "TIMEOUT") || budget.signal.aborted)
          throw err;
        challenge = { reply: null, pingMs: null, partial: false };
      }
      const query = encodeGamespy3QueryRequest(
        requestId,
        challenge.reply,
        options.jc2mp === true ? 0x02 : 0x01,
      );
      try {
        const result = await collect(
          session,
          query,
          step,
          gamespy3Collector(requestId, options.jc2mp === true),
          share,
        );
        if (!result.partial) return { ...result, pingMs: challenge.pingMs };
        if (best === null) best = { ...result, pingMs: challenge.pingMs };
      } catch (err) {
        if (!(err instanceof ProtocolError && err.code === "TIMEOUT")) throw err;
        if (attempt >= attempts || budget.signal.aborted) {
          if (best !== null) return best;
          throw err;
        }
        continue;
      }
      if (attempt >= attempts || budget.signal.aborted) return best;
    }
  });
}

/** Collects one GameSpy v3 reply: split datagrams, a GameSpy v2 single datagram, or JC2MP's variant. */
function gamespy3Collector(requestId: Buffer, jc2mp: boolean): Collector<Gamespy3Reply> {
  const assembler = new Gamespy3Assembler({ requestId });
  let got = false;
  let singleReply: Gamespy3Reply | null = null;
  return {
    accept: (datagram) => datagram[0] === 0 && datagram.subarray(1, 5).equals(requestId),
    push: (datagram) => {
      if (jc2mp) {
        singleReply = { kind: "jc2mp", response: decodeJc2mpResponse(datagram) };
        return true;
      }
      if (!isSplitDatagram(datagram)) {
        singleReply = {
          kind: "single",
          response: decodeGamespy2Response(datagram, ALL_SECTIONS, { requestId }),
        };
        return true;
      }
      got = true;
      return assembler.push(datagram);
    },
    hasData: () => got,
    result: () => singleReply ?? { kind: "split", response: assembler.result() },
  };
}

/** Any of the three reply layouts → ServerStatus. */
function replyToStatus(reply: Gamespy3Reply): ServerStatus {
  if (reply.kind === "split") return gamespy3ToStatus(reply.response);
  if (reply.kind === "jc2mp") return jc2mpToStatus(reply.response);
  return { ...gamespy2ToStatus([reply.response]), protocol: "gamespy3" };
}

/** Captured datagrams; the layout (split, GameSpy v2 single, JC2MP) is recognised from the bytes. */
function decodeStatus(packets: readonly Buffer[]): ServerStatus {
  const replies = packets.filter((p) => p[0] !== GAMESPY3_CHALLENGE);
  onlyDatagram(replies, "gamespy3");
  if (!replies.every(isSplitDatagram))
    return gamespy2ToStatus(replies.map((p) => decodeGamespy2Unknown(p)));
  // JC2MP: one datagram numbered 0 without the last flag, u16 count after the server keys.
  if (replies.length === 1 && replies[0]![14] === 0) {
    try {
      return jc2mpToStatus(decodeJc2mpResponse(replies[0]!));
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
    }
  }
  return gamespy3ToStatus(decodeGamespy3Response(replies));
}

/** The server side: a challenge per client, then the full answer in split datagrams to a query that echoes it. */
function answer(request: Buffer, s: ServedState, context: AnswerContext): Buffer[] | null {
  if (request.length < 7 || request[0] !== 0xfe || request[1] !== 0xfd) return null;
  const requestId = Buffer.from(request.subarray(3, 7));
  if (request[2] === 0x09) {
    context.onChallenge();
    return [encodeGamespy3ChallengeResponse(requestId, context.challenge())];
  }
  if (request[2] !== 0x00 || request.length !== 15) return null; // id, challenge, FF FF FF 01
  if (request.readInt32BE(7) !== context.challenge()) return null; // a stale or missing challenge: silence
  return encodeGamespy3Response(
    {
      requestId,
      server: gamespyServerPairs(s),
      players: {
        fields: ["player_", "score_", "ping_", "team_"],
        rows: s.playerList.map((p, i) => ({
          player_: p.name,
          score_: String(p.score),
          ping_: String(p.pingMs),
          team_: String((i % 2) + 1),
        })),
      },
      teams: {
        fields: ["team_t", "score_t"],
        rows: [
          { team_t: "Red", score_t: "0" },
          { team_t: "Blue", score_t: "0" },
        ],
      },
    },
    { maxDatagramBytes: context.maxDatagramBytes },
  );
}

/** GameSpy v3. */
export const gamespy3Protocol: ProtocolModule = {
  id: "gamespy3",
  name: "GameSpy v3",
  queryStatus: async (address, options: ProtocolQueryOptions = {}) => {
    const r = await queryGamespy3(address, options);
    return { ...replyToStatus(r.reply), pingMs: r.pingMs, ...(r.partial ? { partial: true } : {}) };
  },
  decodeStatus: decodeStatus,
  quirksFor: (raw) => quirksFrom(QUIRKS, raw),
  answer,
};
