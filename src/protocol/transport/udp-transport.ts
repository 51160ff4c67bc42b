/**
 * One UDP socket per address family carries every query of a process (the gamedig idea, made to
 * scale): a reply is matched to its query by the remote's address AND port through one Map lookup,
 * and anything else is dropped and counted, never logged per packet.
 *
 * Per remote, exchanges run one after another (a "channel"): a challenge reply (`A`) does not say
 * which request it answers, so two requests in flight to one game server could not be told apart.
 * Thousands of remotes still run at once.
 *
 * Time: a query's budget is a deadline (a performance.now() time), not an AbortSignal and a timer of
 * its own; re-sends, grace periods and deadlines of every exchange in flight sit in one list that a
 * single sweep timer per transport walks every SWEEP_MS. At thousands of queries a second, a signal,
 * a listener and a timer per query and per send were a large share of the client's CPU and garbage
 * (docs/BENCHMARKS-history.md, query part). A caller's AbortSignal still aborts whatever hangs off it, through
 * one listener for all (abort-link.ts). Sockets are ref'd only while exchanges are in flight, so an idle
 * transport never keeps a process alive.
 */
import dgram from "node:dgram";
import { isIP } from "node:net";
import { performance } from "node:perf_hooks";
import { linkAbort } from "../abort-link";
import { DEFAULT_RECEIVE_BUFFER_BYTES } from "../defaults";
import { ProtocolError } from "../errors";
import { ipLiteralLookup } from "./ip-literal-lookup";
import type { ServerAddress } from "../types";

/** Reassembles split responses from one remote; returns the full payload once complete. */
export interface DatagramAssembler {
  push(datagram: Buffer): Buffer | null;
}

/**
 * What a handler makes of one (reassembled) payload: undefined = not for this exchange (ignored and
 * counted); final = settle now; not final = keep it unless a final answer follows within graceMs.
 */
export type HandlerResult<T> = { value: T; final: boolean } | undefined;

export interface ExchangeOptions {
  /**
   * Aborts the exchange. Without `deadline` it is also the exchange's deadline: its abort rejects with
   * TIMEOUT for a timeout reason (a ProtocolError reason as given), else ABORTED. With `deadline` it is
   * the caller's: its abort is ABORTED whatever the reason.
   */
  signal?: AbortSignal;
  /** performance.now() time at which the exchange fails with TIMEOUT (or settles with a tentative answer). */
  deadline?: number;
  /** How long one attempt waits before the request is sent again. */
  attemptTimeoutMs: number;
  /** Re-sends after the first attempt; after the last attempt's wait the exchange fails with TIMEOUT. */
  retries: number;
  /** After a non-final answer, how long to wait for a final one. @defaultValue 0 */
  graceMs?: number;
  /** Reassembles split datagrams (first 4 bytes FE FF FF FF); without it they are dropped. */
  createAssembler?: () => DatagramAssembler;
}

export interface ExchangeResult<T> {
  value: T;
  /** From the last send of the request to the datagram that completed the answer. */
  rttMs: number;
}

export interface UdpTransportOptions {
  /** Local addresses to bind. @defaultValue '0.0.0.0' and '::' */
  bindAddress4?: string;
  bindAddress6?: string;
  /** Kernel receive buffer wanted per socket (bursts of thousands of replies). @defaultValue 4 MiB */
  receiveBufferBytes?: number;
}

/** Counters; cheap to keep, read them for metrics. */
export interface UdpTransportStats {
  sent: number;
  received: number;
  /** From an address:port with no exchange under way: foreign packets, and late replies (answers to a re-send after the first answer settled the exchange). */
  droppedForeign: number;
  /** From a known remote but between exchanges, or refused by the handler. */
  droppedUnexpected: number;
  /** Split fragments that did not complete a payload yet (normal) are not counted; broken ones are. */
  droppedSplitErrors: number;
}

type Family = 4 | 6;

interface PendingExchange {
  onDatagram(datagram: Buffer): void;
}

/** Exchanges queued for one remote; only the head receives datagrams. */
interface Channel {
  key: string;
  active: PendingExchange | null;
  waiting: Array<() => void>;
  busy: boolean;
}

/** How often the sweep looks for re-sends and deadlines that are due: their resolution. */
const SWEEP_MS = 10;

/** Something with a due time in the transport's sweep list. */
interface Timed {
  dueAt: number;
  /** Index in the sweep list, -1 when not in it. */
  slot: number;
  onDue(): void;
}

/** A lease on one remote's channel: exchanges through it, then release(). */
export interface RemoteSession {
  exchange<T>(
    request: Buffer,
    handle: (payload: Buffer) => HandlerResult<T>,
    options: ExchangeOptions,
  ): Promise<ExchangeResult<T>>;
  release(): void;
}

/** Canonical text of an IP literal, as rinfo.address reports it; null when `host` is not an IP literal. */
export function canonicalIp(host: string): { ip: string; family: Family } | null {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const family = isIP(bare);
  if (family === 4) return { ip: bare, family: 4 };
  if (family === 6) {
    // The kernel reports IPv6 sources in RFC 5952 form; URL's host parser produces the same.
    const ip = new URL(`udp://[${bare.split("%")[0]}]`).hostname.slice(1, -1);
    return { ip, family: 6 };
  }
  return null;
}

function callerAborted(signal: AbortSignal): ProtocolError {
  return new ProtocolError("ABORTED", "query aborted", { cause: signal.reason });
}

function abortError(signal: AbortSignal): ProtocolError {
  const reason: unknown = signal.reason;
  if (reason instanceof ProtocolError) return reason;
  if (reason instanceof DOMException && reason.name === "TimeoutError") {
    return new ProtocolError("TIMEOUT", "no answer before the deadline");
  }
  return new ProtocolError("ABORTED", "query aborted", { cause: reason });
}

export class UdpTransport {
  private readonly sockets = new Map<Family, dgram.Socket>();
  private readonly opening = new Map<Family, Promise<dgram.Socket>>();
  private readonly channels = new Map<string, Channel>();
  private inFlight = 0;
  private closed = false;
  /** Everything with a due time (re-sends, grace ends, deadlines, waits for a channel), swept by one timer. */
  private readonly timed: Timed[] = [];
  private sweepTimer: NodeJS.Timeout | null = null;
  readonly stats: UdpTransportStats = {
    sent: 0,
    received: 0,
    droppedForeign: 0,
    droppedUnexpected: 0,
    droppedSplitErrors: 0,
  };

  constructor(private readonly options: UdpTransportOptions = {}) {}

  /** The local port of a family's socket once it is open (tests send "foreign" packets to it). */
  localPort(family: Family): number | null {
    const socket = this.sockets.get(family);
    return socket ? socket.address().port : null;
  }

  /**
   * Waits for the remote's channel to be free, then leases it. Always release() in a finally.
   * The host must be an IP literal (resolving names is the caller's business). The wait ends with
   * the signal (as an exchange's does) or at `deadline` (TIMEOUT).
   */
  acquire(remote: ServerAddress, signal?: AbortSignal, deadline?: number): Promise<RemoteSession> {
    try {
      if (this.closed) throw new ProtocolError("NETWORK", "transport is closed");
      const target = canonicalIp(remote.host);
      if (target === null)
        throw new ProtocolError("INVALID_ARGUMENT", `not an IP address: ${remote.host}`);
      if (!Number.isInteger(remote.port) || remote.port < 1 || remote.port > 65535) {
        throw new ProtocolError("INVALID_ARGUMENT", `not a port: ${remote.port}`);
      }
      if (signal?.aborted)
        throw deadline === undefined ? abortError(signal) : callerAborted(signal);
      // The common case, an open socket and a free channel, leases at once: no async step per query.
      const socket = this.sockets.get(target.family);
      const channel = this.channels.get(`${target.ip}|${remote.port}`);
      if (socket !== undefined && channel === undefined)
        return Promise.resolve(this.lease(socket, target.ip, remote.port));
      return this.acquireSlowly(target, remote.port, signal, deadline);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private async acquireSlowly(
    target: { ip: string; family: Family },
    port: number,
    signal: AbortSignal | undefined,
    deadline: number | undefined,
  ): Promise<RemoteSession> {
    const socket = await this.socketFor(target.family);
    const channel = this.channels.get(`${target.ip}|${port}`);
    if (channel?.busy) await this.waitTurn(channel, signal, deadline);
    return this.lease(socket, target.ip, port, channel);
  }

  /** Takes the remote's channel (creating it when there is none) for one session. */
  private lease(socket: dgram.Socket, ip: string, port: number, existing?: Channel): RemoteSession {
    let channel = existing;
    if (channel === undefined) {
      const key = `${ip}|${port}`;
      channel = { key, active: null, waiting: [], busy: false };
      this.channels.set(key, channel);
    }
    channel.busy = true;
    this.retain();
    let released = false;
    const ch = channel;
    return {
      exchange: (request, handle, options) =>
        this.exchange(socket, ip, port, ch, request, handle, options),
      release: () => {
        if (released) return;
        released = true;
        ch.active = null;
        this.releaseRef();
        this.passTurn(ch);
      },
    };
  }

  /** Closes the sockets; exchanges still in flight end at their deadlines. */
  async close(): Promise<void> {
    this.closed = true;
    const sockets = [...this.sockets.values()];
    this.sockets.clear();
    await Promise.all(sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }

  private passTurn(channel: Channel): void {
    const next = channel.waiting.shift();
    if (next) {
      next();
      return;
    }
    channel.busy = false;
    this.channels.delete(channel.key);
  }

  private waitTurn(
    channel: Channel,
    signal: AbortSignal | undefined,
    deadline: number | undefined,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let unlink = (): void => undefined;
      const timed: Timed = {
        dueAt: Infinity,
        slot: -1,
        onDue: () =>
          leave(
            new ProtocolError(
              "TIMEOUT",
              "no answer before the deadline (waiting for the server's channel)",
            ),
          ),
      };
      const turn = (): void => {
        unlink();
        this.disarm(timed);
        if (signal?.aborted || (deadline !== undefined && performance.now() >= deadline)) {
          // Our turn came but we no longer want it: pass it on.
          this.passTurn(channel);
          reject(
            signal?.aborted
              ? deadline === undefined
                ? abortError(signal)
                : callerAborted(signal)
              : new ProtocolError("TIMEOUT", "no answer before the deadline"),
          );
          return;
        }
        resolve();
      };
      const leave = (error: ProtocolError): void => {
        unlink();
        this.disarm(timed);
        const at = channel.waiting.indexOf(turn);
        if (at >= 0) channel.waiting.splice(at, 1);
        reject(error);
      };
      channel.waiting.push(turn);
      if (deadline !== undefined) this.arm(timed, deadline);
      // linkAbort: many queries wait under one caller signal (a crawler's batch), one listener for all.
      if (signal)
        unlink = linkAbort(signal, () =>
          leave(deadline === undefined ? abortError(signal) : callerAborted(signal)),
        );
    });
  }

  /** Puts `timed` in the sweep list (or moves its due time); starts the sweep with the first one. */
  private arm(timed: Timed, dueAt: number): void {
    timed.dueAt = dueAt;
    if (timed.slot < 0) {
      timed.slot = this.timed.length;
      this.timed.push(timed);
    }
    if (this.sweepTimer === null) {
      this.sweepTimer = setInterval(this.sweep, SWEEP_MS);
      // In-flight exchanges keep the sockets ref'd; the sweep alone never keeps a process alive.
      this.sweepTimer.unref();
    }
  }

  private disarm(timed: Timed): void {
    const at = timed.slot;
    if (at < 0) return;
    const last = this.timed.pop() as Timed;
    if (last !== timed) {
      this.timed[at] = last;
      last.slot = at;
    }
    timed.slot = -1;
    if (this.timed.length === 0) this.stopSweep();
  }

  private stopSweep(): void {
    if (this.sweepTimer === null) return;
    clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }

  private readonly sweep = (): void => {
    const now = performance.now();
    for (let at = 0; at < this.timed.length;) {
      const timed = this.timed[at] as Timed;
      if (timed.dueAt > now) {
        at++;
        continue;
      }
      // disarm moves the last entry into this slot: look at the same index again.
      this.disarm(timed);
      timed.onDue();
    }
  };

  private exchange<T>(
    socket: dgram.Socket,
    ip: string,
    port: number,
    channel: Channel,
    request: Buffer,
    handle: (payload: Buffer) => HandlerResult<T>,
    options: ExchangeOptions,
  ): Promise<ExchangeResult<T>> {
    return new Promise<ExchangeResult<T>>((resolve, reject) => {
      const signal = options.signal;
      if (signal?.aborted) {
        reject(options.deadline === undefined ? abortError(signal) : callerAborted(signal));
        return;
      }
      const exchange = new Exchange<T>(
        this,
        socket,
        ip,
        port,
        channel,
        request,
        handle,
        options,
        resolve,
        reject,
      );
      channel.active = exchange;
      if (signal) exchange.unlink = linkAbort(signal, () => exchange.onAbort());
      exchange.send();
    });
  }

  /** @internal Sweep list access for Exchange. */
  armTimer(timed: Timed, dueAt: number): void {
    this.arm(timed, dueAt);
  }

  /** @internal */
  disarmTimer(timed: Timed): void {
    this.disarm(timed);
  }

  private onMessage(family: Family, datagram: Buffer, rinfo: dgram.RemoteInfo): void {
    this.stats.received += 1;
    const channel = this.channels.get(
      `${family === 6 ? rinfo.address.split("%")[0] : rinfo.address}|${rinfo.port}`,
    );
    if (!channel) {
      this.stats.droppedForeign += 1;
      return;
    }
    if (!channel.active) {
      this.stats.droppedUnexpected += 1;
      return;
    }
    channel.active.onDatagram(datagram);
  }

  private socketFor(family: Family): Promise<dgram.Socket> {
    const open = this.sockets.get(family);
    if (open) return Promise.resolve(open);
    let opening = this.opening.get(family);
    if (!opening) {
      opening = this.openSocket(family).finally(() => this.opening.delete(family));
      this.opening.set(family, opening);
    }
    return opening;
  }

  private openSocket(family: Family): Promise<dgram.Socket> {
    return new Promise<dgram.Socket>((resolve, reject) => {
      // Every address reaching the socket is an IP literal (acquire checks).
      const socket = dgram.createSocket({
        type: family === 4 ? "udp4" : "udp6",
        ipv6Only: family === 6,
        lookup: ipLiteralLookup(family),
      });
      const onError = (err: Error): void =>
        reject(
          new ProtocolError("NETWORK", `cannot open a udp${family} socket: ${err.message}`, {
            cause: err,
          }),
        );
      socket.once("error", onError);
      const address =
        family === 4
          ? (this.options.bindAddress4 ?? "0.0.0.0")
          : (this.options.bindAddress6 ?? "::");
      socket.bind({ address, port: 0 }, () => {
        socket.off("error", onError);
        // A socket error after bind (e.g. ICMP-driven) must not crash the process; sends report their own.
        socket.on("error", () => undefined);
        socket.on("message", (datagram, rinfo) => this.onMessage(family, datagram, rinfo));
        try {
          socket.setRecvBufferSize(this.options.receiveBufferBytes ?? DEFAULT_RECEIVE_BUFFER_BYTES);
        } catch {
          // Capped by net.core.rmem_max; the default buffer still works, it only drops more under bursts.
        }
        if (this.inFlight === 0) socket.unref();
        if (this.closed) {
          socket.close();
          reject(new ProtocolError("NETWORK", "transport is closed"));
          return;
        }
        this.sockets.set(family, socket);
        resolve(socket);
      });
    });
  }

  private retain(): void {
    this.inFlight += 1;
    if (this.inFlight === 1) for (const s of this.sockets.values()) s.ref();
  }

  private releaseRef(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0) for (const s of this.sockets.values()) s.unref();
  }
}

const noop = (): void => undefined;

/**
 * One request/answer on a channel: its state in one object (no closures per exchange), in the
 * transport's sweep list while a re-send, a grace end or its deadline is due.
 */
class Exchange<T> implements PendingExchange, Timed {
  dueAt = Infinity;
  slot = -1;
  unlink: () => void = noop;
  private attempts = 0;
  private sentAt = 0;
  private tentative: ExchangeResult<T> | null = null;
  private assembler: DatagramAssembler | null = null;
  private settled = false;
  private readonly deadline: number;

  constructor(
    private readonly transport: UdpTransport,
    private readonly socket: dgram.Socket,
    private readonly ip: string,
    private readonly port: number,
    private readonly channel: Channel,
    private readonly request: Buffer,
    private readonly handle: (payload: Buffer) => HandlerResult<T>,
    private readonly options: ExchangeOptions,
    private readonly resolve: (result: ExchangeResult<T>) => void,
    private readonly reject: (error: ProtocolError) => void,
  ) {
    this.deadline = options.deadline ?? Infinity;
  }

  send(): void {
    this.attempts += 1;
    this.sentAt = performance.now();
    this.transport.stats.sent += 1;
    this.socket.send(this.request, this.port, this.ip, this.afterSend);
    this.transport.armTimer(
      this,
      Math.min(this.sentAt + this.options.attemptTimeoutMs, this.deadline),
    );
  }

  private readonly afterSend = (err: Error | null): void => {
    if (err)
      this.finish(
        new ProtocolError("NETWORK", `send to ${this.ip}:${this.port} failed: ${err.message}`, {
          cause: err,
        }),
      );
  };

  /** A method, not a closure per exchange: most exchanges carry no signal. */
  onAbort(): void {
    if (this.tentative) this.finish(null, this.tentative);
    else {
      const signal = this.options.signal as AbortSignal;
      this.finish(this.options.deadline === undefined ? abortError(signal) : callerAborted(signal));
    }
  }

  onDue(): void {
    if (this.settled) return;
    if (this.tentative) {
      // The grace period (or the deadline during it) ended: the tentative answer stands.
      this.finish(null, this.tentative);
      return;
    }
    if (performance.now() >= this.deadline) {
      this.finish(
        new ProtocolError("TIMEOUT", `no answer from ${this.ip}:${this.port} before the deadline`),
      );
      return;
    }
    if (this.attempts <= this.options.retries) this.send();
    else
      this.finish(
        new ProtocolError(
          "TIMEOUT",
          `no answer from ${this.ip}:${this.port} after ${this.attempts} attempt(s)`,
        ),
      );
  }

  onDatagram(datagram: Buffer): void {
    if (this.settled) return;
    const stats = this.transport.stats;
    let payload: Buffer | null = datagram;
    if (datagram.length >= 4 && datagram.readInt32LE(0) === -2) {
      const createAssembler = this.options.createAssembler;
      if (!createAssembler) {
        stats.droppedUnexpected += 1;
        return;
      }
      this.assembler ??= createAssembler();
      try {
        payload = this.assembler.push(datagram);
      } catch (err) {
        stats.droppedSplitErrors += 1;
        this.finish(
          err instanceof ProtocolError
            ? err
            : new ProtocolError("MALFORMED", String(err), { cause: err }),
        );
        return;
      }
      if (payload === null) return;
    }
    let outcome: HandlerResult<T>;
    try {
      outcome = this.handle(payload);
    } catch (err) {
      this.finish(
        err instanceof ProtocolError
          ? err
          : new ProtocolError("MALFORMED", String(err), { cause: err }),
      );
      return;
    }
    if (outcome === undefined) {
      stats.droppedUnexpected += 1;
      return;
    }
    const result = { value: outcome.value, rttMs: performance.now() - this.sentAt };
    if (outcome.final) {
      this.finish(null, result);
      return;
    }
    if (this.tentative === null) {
      this.tentative = result;
      this.transport.armTimer(
        this,
        Math.min(performance.now() + (this.options.graceMs ?? 0), this.deadline),
      );
    }
  }

  private finish(error: ProtocolError | null, result?: ExchangeResult<T>): void {
    if (this.settled) return;
    this.settled = true;
    this.transport.disarmTimer(this);
    this.unlink();
    if (this.channel.active === this) this.channel.active = null;
    if (error) this.reject(error);
    else this.resolve(result as ExchangeResult<T>);
  }
}
