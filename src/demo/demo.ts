/**
 * `gsindex demo`: an index someone without internet can look at within a minute. A simulated fleet
 * (mostly A2S, some older protocols) on loopback, a simulated Valve master listing its A2S servers,
 * address-list sources for the older protocols, Bomberman servers registered with gsindex's own
 * management server, and the whole service (API, scheduler, workers, management server) crawling it
 * every few seconds (a source whose crawl outlasts the interval: when that crawl is done). The fleet's
 * populations follow a compressed day so the charts have shape.
 */
import { startService, type RunningService } from "../service/service";
import { startFleet, type RunningFleet } from "../simulator/fleet";
import { DEFAULT_FLEET_MIX, makeFleet } from "../simulator/make-fleet";
import { startSimValveMaster, type SimValveMaster } from "../simulator/master";
import { loadConfig } from "../shared/config";
import type { Logger } from "../shared/logger";
import { startBombermanServers, type BombermanClient } from "./bomberman-clients";
import { drivePopulation } from "./population-cycle";

/** Below Linux's ephemeral port range, on a loopback address no other gsindex tool uses by default. */
const DEMO_HOST = "127.0.0.90";
const DEMO_BASE_PORT = 21000;

export interface DemoOptions {
  servers: number;
  apiPort: number;
  managementPort: number;
  crawlIntervalMs: number;
  /** How long one simulated day lasts. */
  dayMs: number;
  /** The environment the rest of the configuration comes from (DATABASE_URL, REDIS_URL, ...). */
  env: Record<string, string | undefined>;
  logger: Logger;
  /** Where the fleet listens. @defaultValue 127.0.0.90, ports from 21000 */
  fleetHost?: string;
  fleetBasePort?: number;
}

export interface RunningDemo {
  apiUrl: string;
  /** The web pages (server browser) served by the same process: apiUrl without /graphql. */
  webUrl: string;
  fleet: RunningFleet;
  master: SimValveMaster;
  stop(): Promise<void>;
}

/** The demo's list sources: the simulated master for A2S, one address list per older protocol. */
export function demoSources(fleet: RunningFleet, master: SimValveMaster): unknown[] {
  // The simulated master has no rate limit (rateLimit: false below): paced like Valve's (the default), its
  // nine region listings took ~45 s of every crawl, so the master's servers were crawled once a minute.
  const sources: unknown[] = [
    {
      name: "demo-valve-master",
      kind: "VALVE_UDP",
      host: master.address.host,
      port: master.address.port,
      filter: "",
      regions: [],
      options: { requestsPerMinute: 0 },
    },
  ];
  const byProtocol = new Map<string, string[]>();
  for (const spec of fleet.specs) {
    if (spec.protocol === undefined || spec.protocol === "source") continue;
    const list = byProtocol.get(spec.protocol) ?? [];
    list.push(`${spec.host}:${spec.queryPort}`);
    byProtocol.set(spec.protocol, list);
  }
  for (const [protocol, addresses] of byProtocol) {
    sources.push({
      name: `demo-${protocol}`,
      kind: "ADDRESS_LIST",
      host: "demo",
      filter: "",
      regions: [],
      options: { protocol, addresses },
    });
  }
  return sources;
}

export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const { logger } = options;
  // Fixed ports on an address of its own, so a second demo run finds the same servers in its database.
  const specs = makeFleet({
    count: options.servers,
    seed: 2026,
    hosts: [options.fleetHost ?? DEMO_HOST],
    basePort: options.fleetBasePort ?? DEMO_BASE_PORT,
    mix: { ...DEFAULT_FLEET_MIX, silent: 0.01, malformed: 0.002, legacyProtocols: 0.06 },
  });
  const fleet = await startFleet(specs);
  const stopPopulation = drivePopulation(fleet, {
    dayMs: options.dayMs,
    stepMs: Math.max(1000, Math.floor(options.crawlIntervalMs / 2)),
  });
  const master = await startSimValveMaster({
    fleet: fleet.specs,
    host: "127.0.0.1",
    port: 0,
    rateLimit: false,
  });
  logger.info(
    { servers: fleet.specs.length, master: `${master.address.host}:${master.address.port}` },
    "demo fleet and master up",
  );

  const config = loadConfig({
    ...options.env,
    MASTER_SOURCES: JSON.stringify(demoSources(fleet, master)),
    ADDRESS_ALLOW_LIST: "127.0.0.0/8,::1",
    // The whole fleet listens on one loopback address (thousands of ports): exempt from the farm rule, which
    // would otherwise flag every server of it as a suspected fake.
    FARM_RULE_EXEMPT_RANGES: options.fleetHost ?? DEMO_HOST,
    CRAWL_INTERVAL_MS: String(options.crawlIntervalMs),
    API_HOST: "127.0.0.1",
    API_PORT: String(options.apiPort),
    MANAGEMENT_HOST: "127.0.0.1",
    MANAGEMENT_PORT: String(options.managementPort),
    GSINDEX_QUEUE_PREFIX: options.env.GSINDEX_QUEUE_PREFIX ?? "gsindex-demo",
    QUERY_TIMEOUT_MS: options.env.QUERY_TIMEOUT_MS ?? "1000",
  });
  let service: RunningService | null = null;
  let bombermen: BombermanClient[] = [];
  try {
    service = await startService(config, ["management", "scheduler", "worker", "api"], logger);
    bombermen = await startBombermanServers({
      managementPort: options.managementPort,
      count: 6,
      updateEveryMs: 5000,
    });
  } catch (err) {
    await service?.stop();
    stopPopulation();
    await master.close();
    await fleet.stop();
    throw err;
  }
  // The bound port: with --api-port 0 the OS picks one.
  const apiUrl = service.apiUrl ?? `http://127.0.0.1:${options.apiPort}/graphql`;
  return {
    apiUrl,
    webUrl: apiUrl.replace(/\/graphql$/, "/"),
    fleet,
    master,
    async stop() {
      for (const b of bombermen) b.close();
      await service?.stop();
      stopPopulation();
      await master.close();
      await fleet.stop();
    },
  };
}
