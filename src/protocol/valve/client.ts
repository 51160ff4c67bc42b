/**
 * Valve A2S queries over the shared UDP transport: the codecs wired to sockets, with the challenge
 * dance every modern server wants. Spec: Valve's "Server Queries" page; docs/protocols.md "Valve A2S".
 *
 * The dance, per query kind (INFO, PLAYER, RULES):
 *   1. send the request without a challenge (PLAYER/RULES carry FF FF FF FF);
 *   2. an S2C_CHALLENGE (`A` + 4 bytes) means: send it again with those bytes; a server may do this
 *      again (MAX_CHALLENGE_ROUNDS, then CHALLENGE_LOOP); a data reply ends it, even at step 1;
 *   3. PLAYER/RULES that get no answer at all with -1 (old servers) are retried once through the
 *      deprecated `W` GETCHALLENGE, with half of the query's time left for that.
 * INFO from a server that sends both the GoldSrc `m` and the Source `I` reply: the `I` wins, the `m`
 * is kept as `goldSrc` (its address and mod block say things `I` does not).
 *
 * Deadlines: `timeoutMs` bounds each part (INFO, PLAYER, RULES) as a whole, challenge rounds and
 * re-sends included; `retries` re-sends within it. A part's deadline is a time handed to the transport
 * (which sweeps all of them with one timer), not an AbortSignal and a timer per part.
 */
import {
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  GOLDSRC_INFO_GRACE_MS,
  MAX_CHALLENGE_ROUNDS,
} from "../defaults";
import { ProtocolError } from "../errors";
import { defaultTransport } from "../transport/default-transport";
import type { HandlerResult, RemoteSession, UdpTransport } from "../transport/udp-transport";
import type { QueryOptions, ServerAddress } from "../types";
import { encodePingRequest } from "./a2a-ping";
import { encodeGetChallengeRequest } from "./a2s-challenge";
import { encodeInfoRequest, type A2SInfo } from "./a2s-info";
import { encodePlayerRequest, type DecodeContext, type PlayersResult } from "./a2s-player";
import { decodeResponse, type A2SResponse } from "./a2s-response";
import { encodeRulesRequest, type RulesResult } from "./a2s-rules";
import {
  A2A_ACK,
  S2A_INFO_DETAILED,
  S2A_INFO_SRC,
  S2A_PLAYER,
  S2A_RULES,
  S2C_CHALLENGE,
} from "./constants";
import type { GoldSrcInfo } from "./info-goldsrc";
import { SplitAssembler } from "./split-packet";

export interface A2SQueryOptions extends QueryOptions {
  /** The transport to send through. @defaultValue one shared per process (sockets opened on first use). */
  transport?: UdpTransport;
}

export interface PlayersQueryOptions extends A2SQueryOptions {
  /** The app id from A2S_INFO: The Ship (2400) lays out A2S_PLAYER differently. */
  appId?: number;
}

export interface InfoAnswer {
  /** The Source `I` reply when there was one, else the GoldSrc `m` reply. */
  info: A2SInfo;
  /** The GoldSrc `m` reply of a server that sent both. */
  goldSrc?: GoldSrcInfo;
  /** Round trip of the first INFO request (challenge or data reply), in milliseconds. */
  pingMs: number;
}

export type ServerQueryPart = "info" | "players" | "rules";

export interface ServerQueryResult {
  info: InfoAnswer | null;
  players: PlayersResult | null;
  rules: RulesResult | null;
  pingMs: number | null;
  /** Why a part is null. */
  errors: Partial<Record<ServerQueryPart, ProtocolError>>;
}

interface Budget {
  /** performance.now() time the part must be done by. */
  deadline: number;
  /** The caller's signal: its abort ends the part with ABORTED. */
  signal: AbortSignal | undefined;
  timeoutMs: number;
  retries: number;
}

function checkOptions(options: A2SQueryOptions): { timeoutMs: number; retries: number } {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  if (!(timeoutMs > 0))
    throw new ProtocolError("INVALID_ARGUMENT", `timeoutMs must be positive, got ${timeoutMs}`);
  if (!Number.isInteger(retries) || retries < 0)
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      `retries must be a whole number >= 0, got ${retries}`,
    );
  return { timeoutMs, retries };
}

/**
 * Runs `body` under a deadline of timeoutMs that the caller's signal can also abort. The deadline is a
 * time the transport checks, so nothing per query is linked to the caller's signal (a crawler's
 * shutdown signal, shared by 100,000 queries) beyond what an exchange in flight links through
 * linkAbort, and nothing outlives the query. Not async (nor are step and the fast paths below): every
 * caller awaits it inside an async function, where a throw here rejects all the same, and an async
 * layer per part costs a promise and a microtask hop per server (docs/BENCHMARKS-history.md, query part).
 */
function withBudget<T>(options: A2SQueryOptions, body: (budget: Budget) => Promise<T>): Promise<T> {
  const { timeoutMs, retries } = checkOptions(options);
  const signal = options.signal;
  if (signal?.aborted)
    throw new ProtocolError("ABORTED", "query aborted", { cause: signal.reason });
  return body({ deadline: performance.now() + timeoutMs, signal, timeoutMs, retries });
}

function isOver(budget: Budget): boolean {
  return budget.signal?.aborted === true || performance.now() >= budget.deadline;
}

const createAssembler = (): SplitAssembler => new SplitAssembler();

type Kind = "info" | "players" | "rules";

/** Reply type bytes of another query: a late or duplicated answer to an earlier request, skipped undecoded. */
const OTHER_REPLIES: Record<Kind | "ping" | "getchallenge", ReadonlySet<number>> = {
  info: new Set([S2A_PLAYER, S2A_RULES, A2A_ACK]),
  players: new Set([S2A_INFO_SRC, S2A_INFO_DETAILED, S2A_RULES, A2A_ACK]),
  rules: new Set([S2A_INFO_SRC, S2A_INFO_DETAILED, S2A_PLAYER, A2A_ACK]),
  ping: new Set([S2A_INFO_SRC, S2A_INFO_DETAILED, S2A_PLAYER, S2A_RULES, S2C_CHALLENGE]),
  getchallenge: new Set([S2A_INFO_SRC, S2A_INFO_DETAILED, S2A_PLAYER, S2A_RULES, A2A_ACK]),
};

/**
 * True for a whole reply to a different query. Those are skipped before decoding, so that a
 * broken late answer to INFO cannot fail the PLAYER query that follows; anything else is decoded
 * and, when malformed, fails the query with its typed error.
 */
function isOtherReply(payload: Buffer, kind: Kind | "ping" | "getchallenge"): boolean {
  const type = payload.length >= 5 && payload.readInt32LE(0) === -1 ? payload[4] : undefined;
  return type !== undefined && OTHER_REPLIES[kind].has(type);
}
type Answer<K extends Kind> = Extract<A2SResponse, { kind: K }>["value"];

const NO_CONTEXT: DecodeContext = {};

/**
 * The 4 challenge bytes of a reply decodeResponse has read as S2C_CHALLENGE (FF FF FF FF 41 + 4
 * bytes), taken from the datagram instead of back from their hex form. A view: the request that
 * echoes them copies them.
 */
function challengeBytes(payload: Buffer): Buffer {
  return payload.subarray(5, 9);
}

/**
 * The last challenge this server handed us within one queryServer. A server hands a client one
 * challenge and accepts it for INFO, PLAYER and RULES alike, so PLAYER and RULES start with it
 * instead of -1: one round trip saved each. A server that wants another answers with a challenge,
 * exactly as it would have answered -1, so reusing never costs a round.
 */
interface ChallengeMemo {
  value?: Buffer;
}
type Step<K extends Kind> =
  { challenge: Buffer; answer?: never } | { answer: Answer<K>; challenge?: never };

/**
 * One request/answer: a challenge or the wanted reply settles it; a stray reply of another kind
 * (a late duplicate of an earlier answer) is ignored, and so is a repeat of the challenge just sent
 * (a duplicated datagram would otherwise cost a challenge round).
 */
function step<K extends Kind>(
  session: RemoteSession,
  kind: K,
  request: Buffer,
  budget: Budget,
  attemptTimeoutMs: number,
  appId: number | undefined,
  onGoldSrc?: (info: GoldSrcInfo) => void,
  sentChallenge?: Buffer,
): Promise<{ value: Step<K>; rttMs: number }> {
  const handle = (payload: Buffer): HandlerResult<Step<K>> => {
    if (isOtherReply(payload, kind)) return undefined;
    const response = decodeResponse(payload, appId === undefined ? NO_CONTEXT : { appId });
    if (response.kind === "challenge") {
      const challenge = challengeBytes(payload);
      // The challenge we just echoed, again: a duplicate of the previous reply, not a new round.
      if (sentChallenge?.equals(challenge)) return undefined;
      return { value: { challenge }, final: true };
    }
    if (response.kind !== kind) return undefined;
    const value = { answer: response.value as Answer<K> };
    if (response.kind === "info" && response.value.type === "goldsrc") {
      onGoldSrc?.(response.value);
      return { value, final: false };
    }
    return { value, final: true };
  };
  return session.exchange(request, handle, {
    signal: budget.signal,
    deadline: budget.deadline,
    attemptTimeoutMs,
    retries: budget.retries,
    graceMs: GOLDSRC_INFO_GRACE_MS,
    createAssembler,
  });
}

/**
 * Rounds 2.. of the dance: resend with each new challenge until data arrives. Callers skip it when
 * the first reply is data (most PLAYER and RULES queries): one async call less.
 */
async function dance<K extends Kind>(
  session: RemoteSession,
  kind: K,
  encode: (challenge?: Buffer) => Buffer,
  first: Step<K>,
  budget: Budget,
  appId: number | undefined,
  onGoldSrc?: (info: GoldSrcInfo) => void,
  memo: ChallengeMemo = {},
): Promise<Answer<K>> {
  let current = first;
  for (let round = 1; current.challenge !== undefined; round++) {
    if (round > MAX_CHALLENGE_ROUNDS) {
      throw new ProtocolError(
        "CHALLENGE_LOOP",
        `${kind}: still answered with a challenge after ${MAX_CHALLENGE_ROUNDS} rounds`,
      );
    }
    memo.value = current.challenge;
    const attemptTimeoutMs = budget.timeoutMs / (budget.retries + 1);
    current = (
      await step(
        session,
        kind,
        encode(current.challenge),
        budget,
        attemptTimeoutMs,
        appId,
        onGoldSrc,
        current.challenge,
      )
    ).value;
  }
  return current.answer;
}

async function infoWith(
  session: RemoteSession,
  budget: Budget,
  memo: ChallengeMemo = {},
): Promise<InfoAnswer> {
  let goldSrc: GoldSrcInfo | undefined;
  const onGoldSrc = (info: GoldSrcInfo): void => {
    goldSrc = info;
  };
  const attemptTimeoutMs = budget.timeoutMs / (budget.retries + 1);
  const first = await step(
    session,
    "info",
    encodeInfoRequest(),
    budget,
    attemptTimeoutMs,
    undefined,
    onGoldSrc,
  );
  const info =
    first.value.challenge === undefined
      ? first.value.answer
      : await dance(
          session,
          "info",
          encodeInfoRequest,
          first.value,
          budget,
          undefined,
          onGoldSrc,
          memo,
        );
  const answer: InfoAnswer = { info, pingMs: Math.round(first.rttMs * 100) / 100 };
  if (goldSrc !== undefined && info.type === "source") answer.goldSrc = goldSrc;
  return answer;
}

async function listWith<K extends "players" | "rules">(
  session: RemoteSession,
  kind: K,
  encode: (challenge?: Buffer) => Buffer,
  budget: Budget,
  appId: number | undefined,
  memo: ChallengeMemo = {},
): Promise<Answer<K>> {
  // Half the time for the first request, so that a server which ignores it still leaves time for `W`.
  const firstAttemptMs = budget.timeoutMs / (2 * (budget.retries + 1));
  let first: Step<K>;
  try {
    first = (await step(session, kind, encode(memo.value), budget, firstAttemptMs, appId)).value;
  } catch (err) {
    if (!(err instanceof ProtocolError && err.code === "TIMEOUT") || isOver(budget)) throw err;
    const attemptTimeoutMs = budget.timeoutMs / (2 * (budget.retries + 1));
    const legacy = await session.exchange(
      encodeGetChallengeRequest(),
      (payload): HandlerResult<Buffer> => {
        if (isOtherReply(payload, "getchallenge")) return undefined;
        const response = decodeResponse(payload);
        return response.kind === "challenge"
          ? { value: challengeBytes(payload), final: true }
          : undefined;
      },
      {
        signal: budget.signal,
        deadline: budget.deadline,
        attemptTimeoutMs,
        retries: budget.retries,
      },
    );
    first = { challenge: legacy.value };
  }
  if (first.challenge === undefined) return first.answer;
  return dance(session, kind, encode, first, budget, appId, undefined, memo);
}

async function withSession<T>(
  address: ServerAddress,
  options: A2SQueryOptions,
  body: (session: RemoteSession, budget: Budget) => Promise<T>,
): Promise<T> {
  const transport = options.transport ?? defaultTransport();
  return withBudget(options, async (budget) => {
    const session = await transport.acquire(address, budget.signal, budget.deadline);
    try {
      return await body(session, budget);
    } finally {
      session.release();
    }
  });
}

/** A2S_INFO, with the challenge dance; pingMs is the first request's round trip. */
export async function queryInfo(
  address: ServerAddress,
  options: A2SQueryOptions = {},
): Promise<InfoAnswer> {
  return withSession(address, options, (session, budget) => infoWith(session, budget));
}

/** A2S_PLAYER, with the challenge dance and the `W` fallback. Pass appId from INFO (The Ship). */
export async function queryPlayers(
  address: ServerAddress,
  options: PlayersQueryOptions = {},
): Promise<PlayersResult> {
  return withSession(address, options, (session, budget) =>
    listWith(session, "players", encodePlayerRequest, budget, options.appId),
  );
}

/** A2S_RULES, with the challenge dance and the `W` fallback. */
export async function queryRules(
  address: ServerAddress,
  options: A2SQueryOptions = {},
): Promise<RulesResult> {
  return withSession(address, options, (session, budget) =>
    listWith(session, "rules", encodeRulesRequest, budget, undefined),
  );
}

/** A2A_PING (deprecated; many servers ignore it): the round trip in milliseconds. */
export async function queryPing(
  address: ServerAddress,
  options: A2SQueryOptions = {},
): Promise<number> {
  return withSession(address, options, async (session, budget) => {
    const handle = (payload: Buffer): HandlerResult<true> =>
      !isOtherReply(payload, "ping") && decodeResponse(payload).kind === "ping"
        ? { value: true, final: true }
        : undefined;
    const result = await session.exchange(encodePingRequest(), handle, {
      signal: budget.signal,
      deadline: budget.deadline,
      attemptTimeoutMs: budget.timeoutMs / (budget.retries + 1),
      retries: budget.retries,
    });
    return Math.round(result.rttMs * 100) / 100;
  });
}

/** The app id that decides reply layouts: the 64-bit game id's low 24 bits when sent (app ids > 65535). */
function appIdOf(info: A2SInfo): number | undefined {
  if (info.type !== "source") return undefined;
  if (info.gameId !== undefined) return Number(BigInt(info.gameId) & 0xffffffn);
  return info.appId;
}

function asProtocolError(err: unknown): ProtocolError {
  return err instanceof ProtocolError
    ? err
    : new ProtocolError("NETWORK", err instanceof Error ? err.message : String(err), {
        cause: err,
      });
}

/**
 * INFO, then PLAYER and RULES, one after another on one lease of the server's channel, PLAYER and
 * RULES starting with the challenge already held (ChallengeMemo); each part has its own `timeoutMs`. A part that fails is null with its error in `errors`. When INFO times out
 * the other parts are not tried (a silent server would cost three timeouts).
 */
export async function queryServer(
  address: ServerAddress,
  options: A2SQueryOptions = {},
): Promise<ServerQueryResult> {
  const result: ServerQueryResult = {
    info: null,
    players: null,
    rules: null,
    pingMs: null,
    errors: {},
  };
  const transport = options.transport ?? defaultTransport();
  checkOptions(options);
  // Waiting for the server's channel (another query to it in flight) counts against the caller's signal only.
  const session = await transport.acquire(address, options.signal);
  const memo: ChallengeMemo = {};
  try {
    try {
      result.info = await withBudget(options, (budget) => infoWith(session, budget, memo));
      result.pingMs = result.info.pingMs;
    } catch (err) {
      result.errors.info = asProtocolError(err);
      if (result.errors.info.code === "TIMEOUT" || result.errors.info.code === "ABORTED") {
        const skipped = new ProtocolError(
          result.errors.info.code,
          "not asked: the server did not answer A2S_INFO",
        );
        result.errors.players = skipped;
        result.errors.rules = skipped;
        return result;
      }
    }
    const appId = result.info ? appIdOf(result.info.info) : undefined;
    try {
      result.players = await withBudget(options, (budget) =>
        listWith(session, "players", encodePlayerRequest, budget, appId, memo),
      );
    } catch (err) {
      result.errors.players = asProtocolError(err);
    }
    try {
      result.rules = await withBudget(options, (budget) =>
        listWith(session, "rules", encodeRulesRequest, budget, appId, memo),
      );
    } catch (err) {
      result.errors.rules = asProtocolError(err);
    }
    return result;
  } finally {
    session.release();
  }
}
