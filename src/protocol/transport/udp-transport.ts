/**
 * One UDP socket per address family carries every query of a process (the gamedig idea, made to
 * scale): a reply is matched to its query by the remote's address AND port through one Map lookup,
 * and anything else is dropped and counted, never logged per packet.
 *
 * Per remote, exchanges run one after another (a "channel"): a challenge reply (`A`) does not say
 * which request it answers, so two requests in flight to one game server could not be told apart.
 * Thousands of remotes still run at once.
 *
 * Deadlines are AbortSignals (docs/code-layout.md, conventions); resends use one timer per in-flight exchange, cleared
 * as soon as it settles. Sockets are ref'd only while exchanges are in flight, so an idle transport never
 * keeps a process alive.
 */
import dgram from "node:dgram";
import { isIP } from "node:net";
import { performance } from "node:perf_hooks";
import { linkAbort } from "../abort-link";
import { DEFAULT_RECEIVE_BUFFER_BYTES } from "../defaults";
import { ProtocolError } from "../errors";
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
  /** Deadline of the whole exchange (usually the query's signal). Aborting it rejects with TIMEOUT or ABORTED. */
  signal: AbortSignal;
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
   * The host must be an IP literal (resolving names is the caller's business).
   */
  async acquire(remote: ServerAddress, signal: AbortSignal): Promise<RemoteSession> {
    if (this.closed) throw new ProtocolError("NETWORK", "transport is closed");
    const target = canonicalIp(remote.host);
    if (target === null)
      throw new ProtocolError("INVALID_ARGUMENT", `not an IP address: ${remote.host}`);
    if (!Number.isInteger(remote.port) || remote.port < 1 || remote.port > 65535) {
      throw new ProtocolError("INVALID_ARGUMENT", `not a port: ${remote.port}`);
    }
    if (signal.aborted) throw abortError(signal);
    const socket = await this.socketFor(target.family);
    const key = `${target.ip}|${remote.port}`;
    let channel = this.channels.get(key);
    if (!channel) {
      channel = { key, active: null, waiting: [], busy: false };
      this.channels.set(key, channel);
    }
    if (channel.busy) await this.waitTurn(channel, signal);
    channel.busy = true;
    this.retain();
    let released = false;
    const ch = channel;
    return {
      exchange: (request, handle, options) =>
        this.exchange(socket, target.ip, remote.port, ch, request, handle, options),
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

  private waitTurn(channel: Channel, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let unlink = (): void => undefined;
      const turn = (): void => {
        unlink();
        if (signal.aborted) {
          // Our turn came but we no longer want it: pass it on.
          this.passTurn(channel);
          reject(abortError(signal));
          return;
        }
        resolve();
      };
      const onAbort = (): void => {
        const at = channel.waiting.indexOf(turn);
        if (at >= 0) channel.waiting.splice(at, 1);
        reject(abortError(signal));
      };
      channel.waiting.push(turn);
      // linkAbort: many queries wait under one caller signal (a crawler's batch), one listener for all.
      unlink = linkAbort(signal, onAbort);
    });
  }

  private exchange<T>(
    socket: dgram.Socket,
    ip: string,
    port: number,
    channel: Channel,
    request: Buffer,
    handle: (payload: Buffer) => HandlerResult<T>,
    options: ExchangeOptions,
  ): Promise<ExchangeResult<T>> {
    const { signal, attemptTimeoutMs, retries } = options;
    const graceMs = options.graceMs ?? 0;
    return new Promise<ExchangeResult<T>>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortError(signal));
        return;
      }
      let attempts = 0;
      let sentAt = 0;
      let timer: NodeJS.Timeout | null = null;
      let tentative: ExchangeResult<T> | null = null;
      let assembler: DatagramAssembler | null = null;
      let settled = false;
      let unlink = (): void => undefined;

      const finish = (error: ProtocolError | null, result?: ExchangeResult<T>): void => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        unlink();
        if (channel.active === pending) channel.active = null;
        if (error) reject(error);
        else resolve(result as ExchangeResult<T>);
      };
      const onAbort = (): void => {
        if (tentative) finish(null, tentative);
        else finish(abortError(signal));
      };
      const send = (): void => {
        attempts += 1;
        sentAt = performance.now();
        this.stats.sent += 1;
        socket.send(request, port, ip, (err) => {
          if (err)
            finish(
              new ProtocolError("NETWORK", `send to ${ip}:${port} failed: ${err.message}`, {
                cause: err,
              }),
            );
        });
        timer = setTimeout(onAttemptTimeout, attemptTimeoutMs);
      };
      const onAttemptTimeout = (): void => {
        timer = null;
        if (attempts <= retries) send();
        else
          finish(
            new ProtocolError(
              "TIMEOUT",
              `no answer from ${ip}:${port} after ${attempts} attempt(s)`,
            ),
          );
      };
      const onGraceEnd = (): void => {
        timer = null;
        if (tentative) finish(null, tentative);
      };

      const pending: PendingExchange = {
        onDatagram: (datagram) => {
          let payload: Buffer | null = datagram;
          if (datagram.length >= 4 && datagram.readInt32LE(0) === -2) {
            if (!options.createAssembler) {
              this.stats.droppedUnexpected += 1;
              return;
            }
            assembler ??= options.createAssembler();
            try {
              payload = assembler.push(datagram);
            } catch (err) {
              this.stats.droppedSplitErrors += 1;
              finish(
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
            outcome = handle(payload);
          } catch (err) {
            finish(
              err instanceof ProtocolError
                ? err
                : new ProtocolError("MALFORMED", String(err), { cause: err }),
            );
            return;
          }
          if (outcome === undefined) {
            this.stats.droppedUnexpected += 1;
            return;
          }
          const result = { value: outcome.value, rttMs: performance.now() - sentAt };
          if (outcome.final) {
            finish(null, result);
            return;
          }
          if (tentative === null) {
            tentative = result;
            if (timer) clearTimeout(timer);
            timer = setTimeout(onGraceEnd, graceMs);
          }
        },
      };
      channel.active = pending;
      unlink = linkAbort(signal, onAbort);
      send();
    });
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
      const socket = dgram.createSocket({
        type: family === 4 ? "udp4" : "udp6",
        ipv6Only: family === 6,
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
