/**
 * A simulated Steam Web API on loopback HTTP: GET /IGameServersService/GetServerList/v1/?key&filter&limit over
 * a simulated fleet, behaving like the real endpoint where gsindex depends on it: the key is checked (403),
 * at most `maxPerCall` records per call (10,000 on the real one), `limit` defaults to 100, no "servers"
 * field when nothing matches, filters in the master grammar (400 when longer than the limit or unreadable),
 * and an optional per-client rate limit answered with 429 + Retry-After.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  MAX_MASTER_FILTER_BYTES,
  STEAM_WEB_API_MAX_PER_CALL,
  parseMasterFilter,
} from "../protocol";
import type { SimServerSpec } from "./fleet-spec";
import { applyMasterFilter } from "./master-filter-match";

export interface SimSteamWebApiOptions {
  fleet: readonly SimServerSpec[];
  /** The only key accepted. */
  key: string;
  /** @defaultValue '127.0.0.1' */
  host?: string;
  /** @defaultValue 0 */
  port?: number;
  /** @defaultValue 10000 */
  maxPerCall?: number;
  /** @defaultValue 190 */
  maxFilterBytes?: number;
  /** Calls allowed per window and client before 429s; absent = no limit. */
  rateLimit?: { callsPerWindow: number; windowMs: number };
}

export interface SimSteamWebApiStats {
  calls: number;
  rateLimited: number;
  refused: number;
  /** Filters of every answered call, in order (tests check how a listing split its query). */
  filters: string[];
}

export interface SimSteamWebApi {
  /** Base URL to give the client (no trailing slash). */
  baseUrl: string;
  stats: SimSteamWebApiStats;
  close(): Promise<void>;
}

function recordOf(spec: SimServerSpec, index: number): Record<string, unknown> {
  const s = spec.state;
  return {
    addr: `${spec.host}:${spec.queryPort}`,
    gameport: s.gamePort,
    steamid: String(90_000_000_000_000_000n + BigInt(index)),
    name: s.name,
    appid: s.appId,
    gamedir: s.folder,
    version: s.version,
    product: s.folder,
    region: spec.region === 0xff ? -1 : spec.region,
    players: s.players,
    max_players: s.maxPlayers,
    bots: s.bots,
    map: s.map,
    secure: s.vacSecured,
    dedicated: s.serverType === "d",
    os: s.environment,
    gametype: s.keywords.join(","),
  };
}

export async function startSimSteamWebApi(options: SimSteamWebApiOptions): Promise<SimSteamWebApi> {
  const stats: SimSteamWebApiStats = { calls: 0, rateLimited: 0, refused: 0, filters: [] };
  const maxPerCall = options.maxPerCall ?? STEAM_WEB_API_MAX_PER_CALL;
  const maxFilterBytes = options.maxFilterBytes ?? MAX_MASTER_FILTER_BYTES;
  const indexOf = new Map(options.fleet.map((spec, i) => [spec, i]));
  const windows = new Map<string, { startedAt: number; calls: number }>();

  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    stats.calls++;
    const url = new URL(req.url ?? "/", "http://sim");
    if (
      req.method !== "GET" ||
      url.pathname.replace(/\/+$/, "") !== "/IGameServersService/GetServerList/v1"
    ) {
      stats.refused++;
      send(404, {});
      return;
    }
    if (url.searchParams.get("key") !== options.key) {
      stats.refused++;
      res.writeHead(403, { "content-type": "text/html" });
      res.end(
        "<html><body><h1>Forbidden</h1>Access is denied. Retrying will not help. Please verify your <pre>key=</pre> parameter.</body></html>",
      );
      return;
    }
    if (options.rateLimit) {
      const client = req.socket.remoteAddress ?? "?";
      const now = Date.now();
      let window = windows.get(client);
      if (!window || now - window.startedAt >= options.rateLimit.windowMs) {
        window = { startedAt: now, calls: 0 };
        windows.set(client, window);
      }
      if (++window.calls > options.rateLimit.callsPerWindow) {
        stats.rateLimited++;
        const waitSeconds = Math.max(
          0,
          (window.startedAt + options.rateLimit.windowMs - now) / 1000,
        );
        send(429, {}, { "retry-after": waitSeconds.toFixed(3) });
        return;
      }
    }
    const filter = url.searchParams.get("filter") ?? "";
    let nodes;
    try {
      if (Buffer.byteLength(filter) > maxFilterBytes) throw new Error("filter too long");
      nodes = parseMasterFilter(filter);
    } catch {
      stats.refused++;
      send(400, {});
      return;
    }
    const limitText = url.searchParams.get("limit");
    const limit = Math.min(
      maxPerCall,
      limitText !== null && /^\d+$/.test(limitText) ? Number(limitText) : 100,
    );
    stats.filters.push(filter);
    const matched = applyMasterFilter(options.fleet, nodes).slice(0, limit);
    send(200, {
      response:
        matched.length === 0
          ? {}
          : { servers: matched.map((spec) => recordOf(spec, indexOf.get(spec) ?? 0)) },
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closed: Promise<void> | null = null;
  return {
    baseUrl: `http://${host}:${address.port}`,
    stats,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })),
  };
}
