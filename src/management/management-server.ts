/**
 * gsindex's own management server for the Bomberman management-server protocol (docs/list-sources.md): game
 * servers connect over TCP (default port 51963), register themselves and report their stats; clients ask for
 * the list. One game server per connection: registering again overwrites it, msUnregisterGameServer or
 * closing the connection removes it, and no connection can touch another's server. Invalid JSON, unknown
 * commands, invalid content, updates before registering and over-long lines get no answer (the protocol has
 * no error reply): they are counted and logged at debug level. A connection that keeps sending garbage, too
 * many connections from one address, or a client that does not read its answers, is closed.
 *
 * Open to the internet (issue 12): a registration speaks only for the address it comes from (an IP literal
 * must be the connection's peer address unless the peer is a trusted relay, `trustedCidrs`); stats must be
 * counts a game server can have (management-messages.ts); a connection that has not registered a game server
 * and completes no line for `idleTimeoutMs` is closed (a half-sent line does not count as activity); the
 * per-address cap groups an IPv6 /64 as one address; and when every slot is taken, the oldest connection with
 * no registered game server makes room, so idle connections cannot lock out game servers.
 *
 * Registered addresses are text: nothing here resolves or contacts them. The crawler listens to the
 * register / update / unregister events (or calls list()) and stores what the game servers report.
 */
import { EventEmitter } from "node:events";
import net from "node:net";
import ipaddr from "ipaddr.js";
import {
  MANAGEMENT_SERVER_PORT,
  MAX_MANAGEMENT_LINE_BYTES,
  MS_QUERY_GAME_SERVERS,
  MS_REGISTER_GAME_SERVER,
  MS_UNREGISTER_GAME_SERVER,
  MS_UPDATE_GAME_SERVER_STATS,
  type ManagementServerEntry,
  classifyServerAddress,
  encodeQueryGameServersReply,
  parseManagementRequest,
} from "../protocol";

/** The subset of pino's Logger this server uses (pino loggers fit as they are). */
export interface ManagementLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

const SILENT: ManagementLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
};

export interface ManagementServerOptions {
  /** @defaultValue '0.0.0.0' */
  host?: string;
  /** @defaultValue 51963; 0 picks a free port (tests). */
  port?: number;
  logger?: ManagementLogger;
  /** A line longer than this is dropped. @defaultValue 16384 */
  maxLineBytes?: number;
  /** Invalid messages in a row after which a connection is closed. @defaultValue 10 */
  maxInvalidMessages?: number;
  /** Open connections per remote address; more are closed at once. @defaultValue 16 */
  maxConnectionsPerAddress?: number;
  /** Open connections in all. @defaultValue 4096 */
  maxConnections?: number;
  /** Unsent reply bytes after which a client that does not read is closed. @defaultValue 1 MiB */
  maxPendingWriteBytes?: number;
  /**
   * A connection with no registered game server that completes no line for this long is closed; 0 never.
   * Registered game servers are not timed out (they may stay silent while nothing changes; TCP keep-alive
   * finds dead ones). @defaultValue 30000
   */
  idleTimeoutMs?: number;
  /** CIDR ranges (or IPs) of relays that may register addresses other than their own ('203.0.113.0/24'). @defaultValue [] */
  trustedCidrs?: readonly string[];
}

export const DEFAULT_MANAGEMENT_IDLE_TIMEOUT_MS = 30_000;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An IP in one spelling (IPv4-mapped IPv6 as IPv4), or null. */
function parsePeer(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!ipaddr.isValid(text)) return null;
  const ip = ipaddr.parse(text);
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()
    ? (ip as ipaddr.IPv6).toIPv4Address()
    : ip;
}

/** What the per-address cap counts as one address: an IPv4 address, or an IPv6 /64 (one subscriber's prefix). */
function capKey(remoteAddress: string): string {
  const ip = parsePeer(remoteAddress);
  if (ip === null) return remoteAddress;
  if (ip.kind() === "ipv4") return ip.toString();
  return `${(ip as ipaddr.IPv6).toNormalizedString().split(":").slice(0, 4).join(":")}::/64`;
}

function inRanges(ip: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly Range[]): boolean {
  return ranges.some(
    ([net, bits]) =>
      ip.kind() === net.kind() &&
      (ip.kind() === "ipv4"
        ? (ip as ipaddr.IPv4).match(net as ipaddr.IPv4, bits)
        : (ip as ipaddr.IPv6).match(net as ipaddr.IPv6, bits)),
  );
}

/** A game server registered on one connection. */
export interface RegisteredGameServer extends ManagementServerEntry {
  /** Stable for the connection's life ("conn-<n>"); a re-registration on the same connection keeps it. */
  id: string;
  /** Where the registering connection came from (not necessarily `address`). */
  remoteAddress: string;
  registeredAt: Date;
  updatedAt: Date;
}

export type UnregisterReason = "command" | "closed" | "replaced";

export interface ManagementServerStats {
  connectionsAccepted: number;
  connectionsRefused: number;
  messages: number;
  invalidJson: number;
  unknownCommand: number;
  invalidContent: number;
  notRegistered: number;
  overlongLines: number;
  closedForGarbage: number;
  closedSlowReaders: number;
  /** Registrations of an IP other than the connection's own, from an untrusted peer. */
  foreignAddress: number;
  closedIdle: number;
  /** Connections without a game server closed to make room when every slot was taken. */
  evicted: number;
  queries: number;
}

interface ManagementServerEvents {
  register: [server: RegisteredGameServer];
  update: [server: RegisteredGameServer];
  unregister: [server: RegisteredGameServer, reason: UnregisterReason];
}

export class ManagementServer extends EventEmitter<ManagementServerEvents> {
  readonly stats: ManagementServerStats = {
    connectionsAccepted: 0,
    connectionsRefused: 0,
    messages: 0,
    invalidJson: 0,
    unknownCommand: 0,
    invalidContent: 0,
    notRegistered: 0,
    overlongLines: 0,
    closedForGarbage: 0,
    closedSlowReaders: 0,
    foreignAddress: 0,
    closedIdle: 0,
    evicted: 0,
    queries: 0,
  };
  private readonly servers = new Map<string, RegisteredGameServer>();
  private readonly perAddress = new Map<string, number>();
  /** Open connections in the order accepted, with whether each has a registered game server (by connection id). */
  private readonly sockets = new Map<net.Socket, string>();
  private readonly trustedRanges: readonly Range[];
  private readonly server: net.Server;
  private readonly logger: ManagementLogger;
  private nextId = 1;
  private listeningPort = 0;

  private constructor(private readonly options: ManagementServerOptions) {
    super();
    this.logger = options.logger ?? SILENT;
    this.trustedRanges = (options.trustedCidrs ?? []).map((text): Range => {
      if (text.includes("/")) return ipaddr.parseCIDR(text);
      const ip = ipaddr.parse(text);
      return [ip, ip.kind() === "ipv4" ? 32 : 128];
    });
    this.server = net.createServer((socket) => this.accept(socket));
  }

  /** Starts listening; resolves once bound. */
  static async start(options: ManagementServerOptions = {}): Promise<ManagementServer> {
    const ms = new ManagementServer(options);
    await new Promise<void>((resolve, reject) => {
      ms.server.once("error", reject);
      ms.server.listen(options.port ?? MANAGEMENT_SERVER_PORT, options.host ?? "0.0.0.0", () => {
        ms.server.off("error", reject);
        resolve();
      });
    });
    ms.listeningPort = ms.address.port;
    ms.logger.info({ port: ms.listeningPort }, "management server listening");
    return ms;
  }

  get address(): { host: string; port: number } {
    const bound = this.server.address() as net.AddressInfo;
    return { host: bound.address, port: bound.port };
  }

  /** The registered game servers, oldest registration first. */
  list(): RegisteredGameServer[] {
    return [...this.servers.values()].map((s) => ({
      ...s,
      players: s.players && { ...s.players },
    }));
  }

  /** Stops accepting, closes every connection (their servers are unregistered: 'closed'). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets.keys()) socket.destroy();
    await closed;
  }

  /** Closes the oldest connection with no registered game server; false when every connection has one. */
  private evictOne(): boolean {
    for (const [socket, id] of this.sockets) {
      if (this.servers.has(id)) continue;
      this.stats.evicted++;
      this.logger.debug(
        { connection: id },
        "management connection closed: making room for a new one",
      );
      this.sockets.delete(socket);
      socket.destroy();
      return true;
    }
    return false;
  }

  private accept(socket: net.Socket): void {
    const remoteAddress = socket.remoteAddress ?? "?";
    const key = capKey(remoteAddress);
    const open = this.perAddress.get(key) ?? 0;
    if (
      open >= (this.options.maxConnectionsPerAddress ?? 16) ||
      (this.sockets.size >= (this.options.maxConnections ?? 4096) && !this.evictOne())
    ) {
      this.stats.connectionsRefused++;
      this.logger.debug(
        { remoteAddress, open },
        "management connection refused: too many connections",
      );
      socket.destroy();
      return;
    }
    this.stats.connectionsAccepted++;
    this.perAddress.set(key, open + 1);
    const id = `conn-${this.nextId++}`;
    this.sockets.set(socket, id);
    socket.setKeepAlive(true, 60_000);
    socket.setNoDelay(true);
    const peer = parsePeer(remoteAddress);
    const trustedPeer = peer !== null && inRanges(peer, this.trustedRanges);
    const idleTimeoutMs = this.options.idleTimeoutMs ?? DEFAULT_MANAGEMENT_IDLE_TIMEOUT_MS;
    // Not socket.setTimeout: any byte resets that, so a line sent one byte at a time would never time out.
    let idleTimer: NodeJS.Timeout | null = null;
    const armIdleTimer = (): void => {
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = null;
      if (idleTimeoutMs <= 0 || this.servers.has(id)) return;
      idleTimer = setTimeout(() => {
        this.stats.closedIdle++;
        this.logger.debug({ connection: id, remoteAddress }, "management connection closed: idle");
        socket.destroy();
      }, idleTimeoutMs);
      idleTimer.unref();
    };
    armIdleTimer();
    const maxLineBytes = this.options.maxLineBytes ?? MAX_MANAGEMENT_LINE_BYTES;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let discarding = false; // inside an over-long line: drop bytes up to its newline
    let invalidInARow = 0;

    const refuse = (
      counter:
        | "invalidJson"
        | "unknownCommand"
        | "invalidContent"
        | "notRegistered"
        | "overlongLines"
        | "foreignAddress",
      detail: string,
    ): void => {
      this.stats[counter]++;
      invalidInARow++;
      this.logger.debug(
        { connection: id, remoteAddress, refusal: counter, detail },
        "management message dropped",
      );
      if (invalidInARow >= (this.options.maxInvalidMessages ?? 10)) {
        this.stats.closedForGarbage++;
        this.logger.warn(
          { connection: id, remoteAddress, invalidInARow },
          "management connection closed: it keeps sending invalid messages",
        );
        socket.destroy();
      }
    };

    const handleLine = (bytes: Buffer): void => {
      const line = bytes.toString("utf8").replace(/\r$/, "");
      if (line.trim() === "") return;
      this.stats.messages++;
      armIdleTimer();
      const parsed = parseManagementRequest(line, {
        forbiddenPorts: [MANAGEMENT_SERVER_PORT, this.listeningPort],
      });
      if (!parsed.ok) {
        refuse(
          parsed.refusal === "INVALID_JSON"
            ? "invalidJson"
            : parsed.refusal === "UNKNOWN_COMMAND"
              ? "unknownCommand"
              : "invalidContent",
          parsed.detail,
        );
        return;
      }
      const request = parsed.request;
      const now = new Date();
      switch (request.command) {
        case MS_REGISTER_GAME_SERVER: {
          // A game server registers itself: an IP other than the peer's is someone else's (a trusted relay aside).
          // A host name is stored as text and never resolved, so it cannot point us anywhere.
          const address = request.content.serverAddress;
          if (!trustedPeer && classifyServerAddress(address) !== "hostname") {
            const claimed = parsePeer(address);
            if (
              peer === null ||
              claimed === null ||
              claimed.kind() !== peer.kind() ||
              claimed.toString() !== peer.toString()
            ) {
              refuse("foreignAddress", `registration of ${address} from ${remoteAddress}`);
              return;
            }
          }
          const previous = this.servers.get(id);
          if (previous) {
            this.servers.delete(id);
            this.emit("unregister", previous, "replaced");
          }
          const registered: RegisteredGameServer = {
            id,
            remoteAddress,
            name: request.content.serverName,
            address: request.content.serverAddress,
            port: request.content.serverPort,
            players: null,
            isLobbyOpen: null,
            gameplayMode: null,
            registeredAt: now,
            updatedAt: now,
          };
          this.servers.set(id, registered);
          armIdleTimer(); // registered: no idle timeout
          this.logger.info(
            {
              connection: id,
              remoteAddress,
              serverName: registered.name,
              serverAddress: registered.address,
              serverPort: registered.port,
            },
            "game server registered",
          );
          this.emit("register", { ...registered });
          break;
        }
        case MS_UPDATE_GAME_SERVER_STATS: {
          const registered = this.servers.get(id);
          if (!registered) {
            refuse("notRegistered", "stats from a connection with no registered game server");
            return;
          }
          registered.players = { ...request.content.players };
          registered.isLobbyOpen = request.content.isLobbyOpen;
          registered.gameplayMode = request.content.gameplayMode;
          registered.updatedAt = now;
          this.emit("update", { ...registered, players: { ...request.content.players } });
          break;
        }
        case MS_UNREGISTER_GAME_SERVER: {
          const registered = this.servers.get(id);
          if (registered) {
            this.servers.delete(id);
            this.logger.info(
              { connection: id, remoteAddress, serverName: registered.name },
              "game server unregistered",
            );
            this.emit("unregister", registered, "command");
            armIdleTimer();
          }
          break;
        }
        case MS_QUERY_GAME_SERVERS:
          this.stats.queries++;
          socket.write(encodeQueryGameServersReply(this.list()));
          if (socket.writableLength > (this.options.maxPendingWriteBytes ?? 1024 * 1024)) {
            this.stats.closedSlowReaders++;
            this.logger.warn(
              { connection: id, remoteAddress },
              "management connection closed: it does not read its answers",
            );
            socket.destroy();
          }
          break;
      }
      invalidInARow = 0;
    };

    socket.on("data", (chunk: Buffer) => {
      let start = 0;
      for (
        let nl = chunk.indexOf(0x0a);
        nl >= 0 && !socket.destroyed;
        nl = chunk.indexOf(0x0a, start)
      ) {
        const piece = chunk.subarray(start, nl);
        start = nl + 1;
        if (discarding) {
          discarding = false;
          continue;
        }
        if (pendingBytes + piece.length > maxLineBytes) {
          pending = [];
          pendingBytes = 0;
          refuse("overlongLines", `line longer than ${maxLineBytes} bytes`);
          continue;
        }
        const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        pending = [];
        pendingBytes = 0;
        handleLine(line);
      }
      if (socket.destroyed || start >= chunk.length || discarding) return;
      const rest = chunk.subarray(start);
      if (pendingBytes + rest.length > maxLineBytes) {
        pending = [];
        pendingBytes = 0;
        discarding = true;
        refuse("overlongLines", `line longer than ${maxLineBytes} bytes`);
        return;
      }
      pending.push(Buffer.from(rest));
      pendingBytes += rest.length;
    });
    socket.on("error", () => undefined); // resets are normal; 'close' follows
    socket.on("close", () => {
      if (idleTimer) clearTimeout(idleTimer);
      this.sockets.delete(socket);
      const left = (this.perAddress.get(key) ?? 1) - 1;
      if (left <= 0) this.perAddress.delete(key);
      else this.perAddress.set(key, left);
      const registered = this.servers.get(id);
      if (registered) {
        this.servers.delete(id);
        this.logger.info(
          { connection: id, remoteAddress, serverName: registered.name },
          "game server gone: connection closed",
        );
        this.emit("unregister", registered, "closed");
      }
    });
  }
}
