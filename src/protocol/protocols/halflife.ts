/**
 * Half-Life WON-era string queries (`details`, `players`, `rules`; also the older `info` and
 * `infostring`): Half-Life 1 servers before Steam and GoldSrc servers that still answer them.
 * Codec: legacy/halflife.ts.
 */
import { onlyDatagram } from "../adapter";
import type { ProtocolModule, ProtocolQueryOptions, AnswerContext, ServedState } from "../adapter";
import { ProtocolError } from "../errors";
import {
  GoldSrcSplitAssembler,
  decodeHalfLifeDatagrams,
  decodeHalfLifeMessage,
  encodeHalfLifeRequest,
  encodeGoldSrcSplit,
  encodeHalfLifeMessage,
} from "../legacy/halflife";
import type { HalfLifeInfo, HalfLifeMessage, HalfLifeSourceInfo } from "../legacy/halflife";
import {
  emptyStatus,
  intOr,
  nullIfEmpty,
  recodePairs,
  rulesOf,
  textFor,
} from "../legacy/normalise";
import { roundMs, withSession } from "../legacy/query-kit";
import type { LegacyQueryOptions } from "../legacy/query-kit";
import { DEFAULT_QUIRKS, quirksFrom } from "../legacy/quirks";
import type { QuirkEntry } from "../legacy/quirks";
import { OOB, kv, startsWith } from "../legacy/serve-kit";
import { lookupKey, parseBoolOrNull, parseIntOrNull, toRecord } from "../legacy/text";
import type { ServerStatus } from "../status";
import type { HandlerResult } from "../transport/udp-transport";
import type { ServerAddress } from "../types";

export const QUIRKS: readonly QuirkEntry[] = [
  { quirks: { ...DEFAULT_QUIRKS, game: "goldsrc", colors: "none" }, matches: () => true },
];

/** Half-Life: the replies to details/info, players and rules together (first of each type wins). */
export function halfLifeToStatus(messages: readonly HalfLifeMessage[]): ServerStatus {
  const info = messages.find(
    (m): m is HalfLifeInfo | HalfLifeSourceInfo =>
      m.type === "m" || m.type === "I" || m.type === "C",
  );
  const playersMessage = messages.find((m) => m.type === "D");
  const rulesMessage = messages.find((m) => m.type === "E");
  const infostring = messages.find((m) => m.type === "infostring");
  const quirks = quirksFrom(QUIRKS, {});
  const text = textFor(quirks);
  const rulePairs = rulesMessage?.type === "E" ? recodePairs(rulesMessage.rules, text) : [];
  const istr = infostring?.type === "infostring" ? toRecord(infostring.pairs) : {};
  const raw: Record<string, string> = { ...istr, ...toRecord(rulePairs) };
  const status = emptyStatus("halflife");
  if (info !== undefined) {
    Object.assign(status, {
      name: text.clean(info.hostname),
      map: info.map,
      folder: info.gamedir,
      game: info.description,
      players: info.numPlayers,
      maxPlayers: info.maxPlayers,
      version: info.type === "I" ? info.version : String(info.protocol),
    });
    if (info.type !== "C") {
      status.bots = info.bots;
      status.passwordProtected = info.passwordProtected;
      status.vacSecured = info.secure;
      status.dedicated = info.serverType === null ? null : info.serverType === "d";
      status.os = info.os === "w" ? "windows" : info.os === "l" ? "linux" : null;
    }
    if (info.type === "I") {
      status.appId = info.appId;
      status.gameId = info.gameId;
      status.steamId = info.steamId;
      status.gamePort = info.gamePort;
    }
  } else if (infostring !== undefined) {
    const k = (n: string): string | undefined => lookupKey(istr, n);
    Object.assign(status, {
      name: text.clean(k("hostname") ?? ""),
      map: k("map") ?? "",
      folder: nullIfEmpty(k("gamedir")),
      game: nullIfEmpty(k("description")),
      players: intOr(k("players"), 0),
      maxPlayers: intOr(k("max"), 0),
      bots: parseIntOrNull(k("bots")),
      passwordProtected: parseBoolOrNull(k("password")),
      vacSecured: parseBoolOrNull(k("secure")),
    });
  }
  if (playersMessage?.type === "D") {
    status.playerList = playersMessage.players.map((p) => ({
      name: text.clean(p.name),
      score: p.score,
      durationSeconds: p.durationSeconds,
      pingMs: null,
      raw: { index: String(p.index), name: text.raw(p.name) },
    }));
  }
  status.rules = rulesOf(rulePairs);
  status.raw = raw;
  return status;
}

export interface HalfLifeQueryResult {
  messages: HalfLifeMessage[];
  pingMs: number | null;
  /** Why a part is missing (players and rules are optional). */
  errors: Partial<Record<"players" | "rules", ProtocolError>>;
}

/** Half-Life WON-era `details`, then `players` and `rules` (rules may come as GoldSrc splits). */
export function queryHalfLife(
  address: ServerAddress,
  options: LegacyQueryOptions = {},
): Promise<HalfLifeQueryResult> {
  return withSession(address, options, async (session, budget) => {
    const ask = async (
      command: "details" | "players" | "rules",
      types: readonly string[],
      share: number,
    ) => {
      const { value, rttMs } = await session.exchange(
        encodeHalfLifeRequest(command),
        (payload): HandlerResult<HalfLifeMessage> => {
          const message = decodeHalfLifeMessage(payload);
          return types.includes(message.type) ? { value: message, final: true } : undefined;
        },
        {
          signal: budget.signal,
          attemptTimeoutMs: (budget.timeoutMs * share) / (budget.retries + 1),
          retries: budget.retries,
          createAssembler: () => new GoldSrcSplitAssembler(),
        },
      );
      return { message: value, rttMs };
    };
    const details = await ask("details", ["m", "C", "I"], 0.5);
    const result: HalfLifeQueryResult = {
      messages: [details.message],
      pingMs: roundMs(details.rttMs),
      errors: {},
    };
    for (const [command, type] of [
      ["players", "D"],
      ["rules", "E"],
    ] as const) {
      try {
        result.messages.push((await ask(command, [type], 0.25)).message);
      } catch (err) {
        if (!(err instanceof ProtocolError)) throw err;
        result.errors[command] = err;
      }
    }
    return result;
  });
}

/** The server side: `details`, `players` and `rules` (rules split in the GoldSrc layout past 1400 bytes). */
function answer(request: Buffer, s: ServedState, context: AnswerContext): Buffer[] | null {
  if (!startsWith(request, OOB)) return null;
  const command = request.subarray(4).toString("latin1").replace(/\0+$/, "");
  if (command === "details") {
    return [
      encodeHalfLifeMessage({
        type: "m",
        address: `${s.host}:${s.gamePort}`,
        hostname: s.name,
        map: s.map,
        gamedir: s.folder,
        description: s.game,
        numPlayers: s.players,
        maxPlayers: s.maxPlayers,
        protocol: 46,
        serverType: s.serverType,
        os: s.environment === "w" ? "w" : "l",
        passwordProtected: s.passwordProtected,
        mod: null,
        secure: s.vacSecured,
        bots: s.bots,
        trailing: Buffer.alloc(0),
      }),
    ];
  }
  if (command === "players") {
    return [
      encodeHalfLifeMessage({
        type: "D",
        countField: s.players,
        players: s.playerList.map((p, i) => ({
          index: i + 1,
          name: p.name,
          score: p.score,
          durationSeconds: p.durationSeconds,
        })),
      }),
    ];
  }
  if (command === "rules") {
    const reply = encodeHalfLifeMessage({
      type: "E",
      countField: s.rules.length,
      rules: s.rules.map((r) => kv(r.name, r.value)),
    });
    return reply.length <= 1400 ? [reply] : encodeGoldSrcSplit(reply, context.splitId);
  }
  return null;
}

/** Half-Life (WON). */
export const halflifeProtocol: ProtocolModule = {
  id: "halflife",
  name: "Half-Life (WON)",
  queryStatus: async (address, options: ProtocolQueryOptions = {}) => {
    const r = await queryHalfLife(address, options);
    return { ...halfLifeToStatus(r.messages), pingMs: r.pingMs };
  },
  decodeStatus: (packets) => {
    onlyDatagram(packets, "halflife");
    return halfLifeToStatus(decodeHalfLifeDatagrams(packets));
  },
  quirksFor: (raw) => quirksFrom(QUIRKS, raw),
  answer,
};
