/**
 * A simulated Valve UDP master over a simulated fleet: it answers 0x31 queries by region and
 * filter, 231 addresses a packet, paging by seed, and rate-limits each source IP like the real one (about
 * 30 packets a minute, then a minute of silence; configurable, and off for benchmarks).
 *
 * Paging is stateless: the list for (region, filter) is fixed by fleet order, and a seed continues after
 * itself in that list (a seed not in the list restarts it). The real master's "new source port restarts the
 * listing" is therefore not modelled; the client keeps one socket anyway. Region 0xFF returns the whole
 * world (as the Valve master server query protocol documents) unless `restIsWorld` is false. Only IPv4 servers are listed (entries have 4 octets).
 */
import dgram from "node:dgram";
import {
  MASTER_ADDRESSES_PER_PACKET,
  parseMasterFilter,
  decodeMasterQuery,
  encodeMasterResponse,
  type ServerAddress,
} from "../protocol";
import type { SimServerSpec } from "./fleet-spec";
import { applyMasterFilter } from "./master-filter-match";

export interface SimMasterRateLimit {
  /** Packets answered per source IP within one window. */
  packetsPerWindow: number;
  windowMs: number;
  /** Silence after the budget is spent, before a new window starts. */
  silenceMs: number;
}

export const REAL_MASTER_RATE_LIMIT: SimMasterRateLimit = {
  packetsPerWindow: 30,
  windowMs: 60_000,
  silenceMs: 60_000,
};

export interface SimValveMasterOptions {
  fleet: readonly SimServerSpec[];
  /** @defaultValue '127.0.0.1' */
  host?: string;
  /** @defaultValue 0 (any free port) */
  port?: number;
  /** @defaultValue REAL_MASTER_RATE_LIMIT; false turns it off (benchmarks). */
  rateLimit?: SimMasterRateLimit | false;
  /** @defaultValue 231 */
  addressesPerPacket?: number;
  /** @defaultValue true: region 0xFF lists every server, as the real master does. */
  restIsWorld?: boolean;
}

export interface SimValveMasterStats {
  requests: number;
  answered: number;
  /** Requests not answered because their source was over its budget. */
  rateLimited: number;
  malformed: number;
}

export interface SimValveMaster {
  address: ServerAddress;
  stats: SimValveMasterStats;
  close(): Promise<void>;
}

interface SourceBudget {
  windowStartedAt: number;
  packets: number;
  silentUntil: number;
}

interface CachedList {
  addresses: ServerAddress[];
  indexOf: Map<string, number>;
}

const key = (a: ServerAddress): string => `${a.host}:${a.port}`;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

export async function startSimValveMaster(options: SimValveMasterOptions): Promise<SimValveMaster> {
  const rateLimit = options.rateLimit === undefined ? REAL_MASTER_RATE_LIMIT : options.rateLimit;
  const perPacket = options.addressesPerPacket ?? MASTER_ADDRESSES_PER_PACKET;
  const restIsWorld = options.restIsWorld ?? true;
  // The Valve master lists A2S servers only; simulated servers of older protocols are not on it.
  const fleet = options.fleet.filter(
    (spec) => IPV4.test(spec.host) && (spec.protocol === undefined || spec.protocol === "source"),
  );
  const stats: SimValveMasterStats = { requests: 0, answered: 0, rateLimited: 0, malformed: 0 };
  const budgets = new Map<string, SourceBudget>();
  const lists = new Map<string, CachedList>();

  const listFor = (region: number, filter: string): CachedList => {
    const cacheKey = `${region}|${filter}`;
    let list = lists.get(cacheKey);
    if (list) return list;
    let nodes;
    try {
      nodes = parseMasterFilter(filter);
    } catch {
      nodes = null; // a filter the master cannot read matches nothing
    }
    const inRegion =
      region === 0xff && restIsWorld ? fleet : fleet.filter((spec) => spec.region === region);
    const matched = nodes === null ? [] : applyMasterFilter(inRegion, nodes);
    const addresses = matched.map((spec) => ({ host: spec.host, port: spec.queryPort }));
    list = { addresses, indexOf: new Map(addresses.map((a, i) => [key(a), i])) };
    if (lists.size > 256) lists.clear();
    lists.set(cacheKey, list);
    return list;
  };

  const allowed = (sourceIp: string): boolean => {
    if (rateLimit === false) return true;
    const now = Date.now();
    let budget = budgets.get(sourceIp);
    if (!budget) {
      budget = { windowStartedAt: now, packets: 0, silentUntil: 0 };
      budgets.set(sourceIp, budget);
    }
    if (now < budget.silentUntil) return false;
    if (now - budget.windowStartedAt >= rateLimit.windowMs) {
      budget.windowStartedAt = now;
      budget.packets = 0;
    }
    budget.packets++;
    if (budget.packets <= rateLimit.packetsPerWindow) return true;
    budget.silentUntil = now + rateLimit.silenceMs;
    budget.windowStartedAt = budget.silentUntil;
    budget.packets = 0;
    return false;
  };

  const socket = dgram.createSocket(options.host?.includes(":") ? "udp6" : "udp4");
  socket.on("message", (packet, remote) => {
    stats.requests++;
    let query;
    try {
      query = decodeMasterQuery(packet);
    } catch {
      stats.malformed++;
      return;
    }
    if (!allowed(remote.address)) {
      stats.rateLimited++;
      return;
    }
    const list = listFor(query.region, query.filter);
    const start =
      query.seed.port === 0 && query.seed.host === "0.0.0.0"
        ? 0
        : (list.indexOf.get(key(query.seed)) ?? -1) + 1;
    const page = list.addresses.slice(start, start + perPacket);
    const end = start + perPacket >= list.addresses.length;
    stats.answered++;
    socket.send(encodeMasterResponse(page, end), remote.port, remote.address);
  });
  // A send to a vanished client must not crash the simulator.
  socket.on("error", () => undefined);

  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      socket.off("error", reject);
      resolve();
    });
  });
  const bound = socket.address();
  let closed: Promise<void> | null = null;
  return {
    address: { host: bound.address, port: bound.port },
    stats,
    close: () => (closed ??= new Promise<void>((resolve) => socket.close(() => resolve()))),
  };
}
