/**
 * What the older protocols' queries share, over the shared UDP transport: one deadline for the
 * whole query, a session per server, and collectors of one reply's datagrams. Each protocol's own
 * request, collection rule and reply matching live in its module under src/protocol/protocols/.
 * Replies are matched by address and port (the transport), then by the protocol's own id where it
 * has one; anything else from that address is ignored.
 *
 * Deadlines: `timeoutMs` bounds one query as a whole, every step and re-send included (never
 * re-send faster than the per-attempt timeout). A multi-datagram reply that is still incomplete at
 * the deadline is returned as it stands with `partial: true` rather than failing.
 */
import { randomBytes } from "node:crypto";
import { DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS } from "../defaults";
import { ProtocolError } from "../errors";
import { startDeadline } from "../master/deadline";
import { defaultTransport } from "../transport/default-transport";
import type { HandlerResult, RemoteSession, UdpTransport } from "../transport/udp-transport";
import type { QueryOptions, ServerAddress } from "../types";

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

export interface Budget {
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
  if (!(timeoutMs > 0))
    throw new ProtocolError("INVALID_ARGUMENT", `timeoutMs must be positive, got ${timeoutMs}`);
  if (!Number.isInteger(retries) || retries < 0)
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      `retries must be a whole number >= 0, got ${retries}`,
    );
  const deadline = startDeadline(
    timeoutMs,
    options.signal,
    new DOMException("The operation was aborted due to timeout", "TimeoutError"),
  );
  return { signal: deadline.signal, timeoutMs, retries, dispose: deadline.dispose };
}

export async function withSession<T>(
  address: ServerAddress,
  options: LegacyQueryOptions,
  body: (session: RemoteSession, budget: Budget) => Promise<T>,
): Promise<T> {
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

export const roundMs = (ms: number): number => Math.round(ms * 100) / 100;

/** A collector of one reply's datagrams: push returns true when the reply is complete. */
export interface Collector<T> {
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
export async function collect<T>(
  session: RemoteSession,
  request: Buffer,
  budget: Budget,
  collector: Collector<T>,
  share = 1,
  extra: { createAssembler?: () => { push(d: Buffer): Buffer | null } } = {},
): Promise<LegacyQueryResult<T>> {
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
    if (err instanceof ProtocolError && err.code === "TIMEOUT" && collector.hasData()) {
      return { reply: collector.result(), pingMs: null, partial: true };
    }
    throw err;
  }
}

/**
 * Some Quake 3 servers send their OOB header as FE FF FF FF, which the transport takes for a
 * split datagram: this "assembler" hands such a datagram on whole.
 */
export const WHOLE_DATAGRAM = {
  createAssembler: () => ({ push: (datagram: Buffer): Buffer => datagram }),
};

/** A reply that is one datagram. */
export function single<T>(decode: (datagram: Buffer) => T | undefined): Collector<T> {
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

export const newRequestId = (): Buffer => randomBytes(4);
