/**
 * Queries for the older protocols over the shared UDP transport: each protocol's request, its
 * multi-datagram collection rule and its deadline. Replies are matched by address and port (the
 * transport), then by the protocol's own id where it has one (GameSpy v2/v3 request id, Doom 3
 * challenge, Quake 3 challenge echo); anything else from that address is ignored.
 *
 * Deadlines: `timeoutMs` bounds one query as a whole, every step and re-send included (spec §0.1:
 * never re-send faster than the per-attempt timeout). A multi-datagram reply that is still
 * incomplete at the deadline (GameSpy v1 without `\final\`, a lost GameSpy v3 datagram) is returned
 * as it stands with `partial: true` rather than failing.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS } from '../defaults';
import { ProtocolError } from '../errors';
import { startDeadline } from '../master/deadline';
import type { HandlerResult, RemoteSession, UdpTransport } from '../transport/udp-transport';
import type { QueryOptions, ServerAddress } from '../types';
import { defaultTransport } from '../transport/default-transport';
import { decodeAseResponse, encodeAseRequest } from './ase';
import type { AseResponse } from './ase';
import { decodeDoom3Response, encodeDoom3InfoRequest } from './doom3';
import type { Doom3Response } from './doom3';
import { Gamespy1Assembler, decodeGamespy1Datagram, encodeGamespy1Request } from './gamespy1';
import type { Gamespy1Response } from './gamespy1';
import { ALL_SECTIONS, decodeGamespy2Response, encodeGamespy2Request } from './gamespy2';
import type { Gamespy2Response } from './gamespy2';
import {
  GAMESPY3_CHALLENGE, Gamespy3Assembler, decodeGamespy3ChallengeResponse, decodeJc2mpResponse, encodeGamespy3ChallengeRequest,
  encodeGamespy3QueryRequest, isSplitDatagram,
} from './gamespy3';
import type { Gamespy3Response, Jc2mpResponse } from './gamespy3';
import { GoldSrcSplitAssembler, decodeHalfLifeMessage, encodeHalfLifeRequest } from './halflife';
import type { HalfLifeMessage } from './halflife';
import { decodeQuakeResponse, encodeQuake2StatusRequest, encodeQuake3StatusRequest } from './quake3';
import type { QuakeResponse } from './quake3';
import { lookupKey, toRecord } from './text';

export interface LegacyQueryOptions extends QueryOptions {
  /** The transport to send through. @defaultValue the process-wide one shared with A2S */
  transport?: UdpTransport;
}

export interface LegacyQueryResult<T> {
  reply: T;
  /** Round trip from the last send of the first request to the datagram that completed its answer. */
  pingMs: number | null;
  /** True when a multi-datagram reply was incomplete at the deadline. */
  partial: boolean;
}

interface Budget {
  signal: AbortSignal;
  timeoutMs: number;
  retries: number;
}

/**
 * The query's deadline, linked to the caller's signal through startDeadline (not AbortSignal.any: a
 * crawler's signal is shared by every query in flight). Timing out aborts with the same reason
 * AbortSignal.timeout would, which the transport reports as TIMEOUT.
 */
function budgetOf(options: LegacyQueryOptions): Budget & { dispose(): void } {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  if (!(timeoutMs > 0)) throw new ProtocolError('INVALID_ARGUMENT', `timeoutMs must be positive, got ${timeoutMs}`);
  if (!Number.isInteger(retries) || retries < 0) throw new ProtocolError('INVALID_ARGUMENT', `retries must be a whole number >= 0, got ${retries}`);
  const deadline = startDeadline(timeoutMs, options.signal, new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  return { signal: deadline.signal, timeoutMs, retries, dispose: deadline.dispose };
}

async function withSession<T>(address: ServerAddress, options: LegacyQueryOptions, body: (session: RemoteSession, budget: Budget) => Promise<T>): Promise<T> {
  const budget = budgetOf(options);
  try {
    const session = await (options.transport ?? defaultTransport()).acquire(address, budget.signal);
    try {
      return await body(session, budget);
    } finally {
      session.release();
    }
  } finally {
    budget.dispose();
  }
}

const roundMs = (ms: number): number => Math.round(ms * 100) / 100;

/** A collector of one reply's datagrams: push returns true when the reply is complete. */
interface Collector<T> {
  /** False: the datagram is not part of this reply (ignored). */
  accept(datagram: Buffer): boolean;
  push(datagram: Buffer): boolean;
  hasData(): boolean;
  result(): T;
}

/**
 * One request whose answer may span datagrams. With `share` of the budget per attempt; on the
 * deadline, whatever was collected is returned as partial.
 */
/**
 * Some Quake 3 servers send their OOB header as FE FF FF FF (§4.2), which the transport takes for a
 * split datagram: this "assembler" hands such a datagram on whole.
 */
const WHOLE_DATAGRAM = { createAssembler: () => ({ push: (datagram: Buffer): Buffer => datagram }) };

async function collect<T>(session: RemoteSession, request: Buffer, budget: Budget, collector: Collector<T>, share = 1, extra: { createAssembler?: () => { push(d: Buffer): Buffer | null } } = {}): Promise<LegacyQueryResult<T>> {
  const handle = (datagram: Buffer): HandlerResult<T> => {
    if (!collector.accept(datagram)) return undefined;
    return collector.push(datagram) ? { value: collector.result(), final: true } : undefined;
  };
  try {
    const { value, rttMs } = await session.exchange(request, handle, {
      signal: budget.signal,
      attemptTimeoutMs: (budget.timeoutMs * share) / (budget.retries + 1),
      retries: budget.retries,
      ...extra,
    });
    return { reply: value, pingMs: roundMs(rttMs), partial: false };
  } catch (err) {
    if (err instanceof ProtocolError && err.code === 'TIMEOUT' && collector.hasData()) {
      return { reply: collector.result(), pingMs: null, partial: true };
    }
    throw err;
  }
}

/** A reply that is one datagram. */
function single<T>(decode: (datagram: Buffer) => T | undefined): Collector<T> {
  let value: T | undefined;
  return {
    accept: () => true,
    push: (datagram) => {
      value = decode(datagram);
      return value !== undefined;
    },
    hasData: () => false,
    result: () => value as T,
  };
}

export interface Quake3QueryOptions extends LegacyQueryOptions {
  /** A byte after the OOB header: MOHAA in Quake 3 mode wants 02 (§4.1, LGSL, qstat). */
  prefixByte?: number;
}

/** Quake 3 `getstatus` with a challenge the server echoes (stale answers are dropped). */
export function queryQuake3(address: ServerAddress, options: Quake3QueryOptions = {}): Promise<LegacyQueryResult<QuakeResponse>> {
  const challenge = randomBytes(6).toString('hex');
  const request = encodeQuake3StatusRequest(options.prefixByte === undefined ? { challenge } : { challenge, prefixByte: options.prefixByte });
  return withSession(address, options, (session, budget) =>
    collect(session, request, budget, single((datagram) => {
      const reply = decodeQuakeResponse(datagram);
      const echo = lookupKey(toRecord(reply.info), 'challenge');
      return echo === undefined || echo === '' || echo === challenge ? reply : undefined;
    }), 1, WHOLE_DATAGRAM),
  );
}

/** Quake 2 family `status` → `print`. */
export function queryQuake2(address: ServerAddress, options: LegacyQueryOptions = {}): Promise<LegacyQueryResult<QuakeResponse>> {
  return withSession(address, options, (session, budget) => collect(session, encodeQuake2StatusRequest(), budget, single(decodeQuakeResponse), 1, WHOLE_DATAGRAM));
}

/** GameSpy v1 `\status\`: datagrams collected until `\final\` and every datagram before it arrived. */
export function queryGamespy1(address: ServerAddress, options: LegacyQueryOptions = {}): Promise<LegacyQueryResult<Gamespy1Response>> {
  // One assembler per query serial: a re-send is answered under a new serial (§1.3).
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
      if (complete || best === null || assembler.datagramCount > best.datagramCount) best = assembler;
      return complete;
    },
    hasData: () => best !== null,
    result: () => best!.result(),
  };
  return withSession(address, options, (session, budget) => collect(session, encodeGamespy1Request(['status']), budget, collector));
}

const newRequestId = (): Buffer => randomBytes(4);

/** GameSpy v2: one `FF FF FF` query, one datagram with every section. */
export function queryGamespy2(address: ServerAddress, options: LegacyQueryOptions = {}): Promise<LegacyQueryResult<Gamespy2Response>> {
  const requestId = newRequestId();
  return withSession(address, options, (session, budget) =>
    collect(session, encodeGamespy2Request(requestId, ALL_SECTIONS), budget, single((datagram) => {
      if (!datagram.subarray(1, 5).equals(requestId)) return undefined;
      return decodeGamespy2Response(datagram, ALL_SECTIONS, { requestId });
    })),
  );
}

export type Gamespy3Reply = { kind: 'split'; response: Gamespy3Response } | { kind: 'single'; response: Gamespy2Response } | { kind: 'jc2mp'; response: Jc2mpResponse };

export interface Gamespy3QueryOptions extends LegacyQueryOptions {
  /** JC2MP's variant (`FF FF FF 02`, players after the server keys). @defaultValue false */
  jc2mp?: boolean;
}

/**
 * GameSpy v3: challenge (`09`), then the full query with split replies accepted; a server that
 * ignores the split flag answers in the GameSpy v2 layout, which is accepted too.
 */
export function queryGamespy3(address: ServerAddress, options: Gamespy3QueryOptions = {}): Promise<LegacyQueryResult<Gamespy3Reply>> {
  return withSession(address, options, async (session, budget) => {
    // Each attempt starts again from the challenge, under a fresh request id (challenges expire, §3.1).
    const attempts = budget.retries + 1;
    const step: Budget = { ...budget, retries: 0 };
    const share = 1 / (2 * attempts);
    let best: LegacyQueryResult<Gamespy3Reply> | null = null;
    for (let attempt = 1; ; attempt += 1) {
      const requestId = newRequestId();
      let challenge: LegacyQueryResult<number | null>;
      try {
        challenge = await collect(session, encodeGamespy3ChallengeRequest(requestId), step, single((datagram) => {
          if (datagram[0] !== GAMESPY3_CHALLENGE || !datagram.subarray(1, 5).equals(requestId)) return undefined;
          return decodeGamespy3ChallengeResponse(datagram).challenge;
        }), share);
      } catch (err) {
        // Servers of the pre-challenge SDK never answer type 09: ask without a challenge (BF2 style).
        if (!(err instanceof ProtocolError && err.code === 'TIMEOUT') || budget.signal.aborted) throw err;
        challenge = { reply: null, pingMs: null, partial: false };
      }
      const query = encodeGamespy3QueryRequest(requestId, challenge.reply, options.jc2mp === true ? 0x02 : 0x01);
      try {
        const result = await collect(session, query, step, gamespy3Collector(requestId, options.jc2mp === true), share);
        if (!result.partial) return { ...result, pingMs: challenge.pingMs };
        if (best === null) best = { ...result, pingMs: challenge.pingMs };
      } catch (err) {
        if (!(err instanceof ProtocolError && err.code === 'TIMEOUT')) throw err;
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
        singleReply = { kind: 'jc2mp', response: decodeJc2mpResponse(datagram) };
        return true;
      }
      if (!isSplitDatagram(datagram)) {
        singleReply = { kind: 'single', response: decodeGamespy2Response(datagram, ALL_SECTIONS, { requestId }) };
        return true;
      }
      got = true;
      return assembler.push(datagram);
    },
    hasData: () => got,
    result: () => singleReply ?? { kind: 'split', response: assembler.result() },
  };
}

/** Doom 3 family `getInfo` with a random 4-byte challenge the server echoes. */
export function queryDoom3(address: ServerAddress, options: LegacyQueryOptions = {}): Promise<LegacyQueryResult<Doom3Response>> {
  let challenge = randomInt(-0x80000000, 0x7fffffff);
  if (challenge === -1) challenge = 1; // FFFFFFFF is ETQW's marker word
  const echo = Buffer.alloc(4);
  echo.writeInt32LE(challenge);
  return withSession(address, options, (session, budget) =>
    collect(session, encodeDoom3InfoRequest(challenge), budget, single((datagram) => {
      const reply = decodeDoom3Response(datagram);
      return reply.challenge.equals(echo) ? reply : undefined;
    })),
  );
}

export interface HalfLifeQueryResult {
  messages: HalfLifeMessage[];
  pingMs: number | null;
  /** Why a part is missing (players and rules are optional). */
  errors: Partial<Record<'players' | 'rules', ProtocolError>>;
}

/** Half-Life WON-era `details`, then `players` and `rules` (rules may come as GoldSrc splits). */
export function queryHalfLife(address: ServerAddress, options: LegacyQueryOptions = {}): Promise<HalfLifeQueryResult> {
  return withSession(address, options, async (session, budget) => {
    const ask = async (command: 'details' | 'players' | 'rules', types: readonly string[], share: number) => {
      const { value, rttMs } = await session.exchange(encodeHalfLifeRequest(command), (payload): HandlerResult<HalfLifeMessage> => {
        const message = decodeHalfLifeMessage(payload);
        return types.includes(message.type) ? { value: message, final: true } : undefined;
      }, {
        signal: budget.signal,
        attemptTimeoutMs: (budget.timeoutMs * share) / (budget.retries + 1),
        retries: budget.retries,
        createAssembler: () => new GoldSrcSplitAssembler(),
      });
      return { message: value, rttMs };
    };
    const details = await ask('details', ['m', 'C', 'I'], 0.5);
    const result: HalfLifeQueryResult = { messages: [details.message], pingMs: roundMs(details.rttMs), errors: {} };
    for (const [command, type] of [['players', 'D'], ['rules', 'E']] as const) {
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

/** All-Seeing Eye `s` → `EYE1` (send it to game port + 123). */
export function queryAse(address: ServerAddress, options: LegacyQueryOptions = {}): Promise<LegacyQueryResult<AseResponse>> {
  return withSession(address, options, (session, budget) => collect(session, encodeAseRequest(), budget, single(decodeAseResponse)));
}
