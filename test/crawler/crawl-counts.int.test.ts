/**
 * Counts a stats site publishes, each over a crawled simulated fleet that has the fault in it (issue 15):
 * the farm rule on an allow-listed address, a fleet listed by two sources at once (one server, one count),
 * and what a crawl covered (dead servers, addresses refused by policy, a listing cut short, a capped one).
 */
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { makeFleet } from "../../src/simulator/make-fleet";
import { startSimValveMaster, type SimValveMaster } from "../../src/simulator/master";
import { startSimSteamWebApi, type SimSteamWebApi } from "../../src/simulator/steam-web-api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { CALM_MIX } from "../helpers/sim";
import { startTestApi, type TestApi } from "../graphql/helpers/api";

jest.setTimeout(180_000);

const KEY = "sim-key";

/** A fleet of `count` calm A2S servers on `host`, ports picked by the OS. */
const fleetOn = (host: string, count: number, seed: number): SimServerSpec[] =>
  makeFleet({ count, seed, hosts: [host], basePort: 0, mix: { ...CALM_MIX, legacyProtocols: 0 } });

/** The same specs at other addresses that nobody listens on (listed only, never started). */
const listedOnly = (
  specs: readonly SimServerSpec[],
  host: string,
  firstPort: number,
): SimServerSpec[] =>
  specs.map((s, i) => ({ ...s, host, queryPort: firstPort + i, gamePort: firstPort + i }));

describe("the farm rule over a crawled fleet", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  let master: SimValveMaster;

  beforeAll(async () => {
    t = await createTestDatabase("gsindex_farm");
    fleet = await startFleet([...fleetOn("127.0.0.21", 210, 1), ...fleetOn("127.0.0.22", 210, 2)]);
    master = await startSimValveMaster({ fleet: fleet.specs, rateLimit: false });
  });
  afterAll(async () => {
    await master?.close();
    await fleet?.stop();
    await t?.drop();
  });

  it("flags 210 ports on one allow-listed IP, and leaves a range exempt from the farm rule alone", async () => {
    const source = await t.db.masterSource.create({
      data: {
        name: "farm-master",
        kind: "VALVE_UDP",
        host: master.address.host,
        port: master.address.port,
        regions: [0xff],
        options: { requestsPerMinute: 0 },
      },
    });
    // Both addresses may be queried; only 127.0.0.22 is exempt from the farm rule (FAKE_PORTS_PER_IP: 200 by default).
    const config = loadConfig({
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      FARM_RULE_EXEMPT_RANGES: "127.0.0.22",
      QUERY_TIMEOUT_MS: "3000",
      LOG_LEVEL: "silent",
    });
    const totals = await runCrawlOnce({
      config,
      db: t.db,
      logger: silentLogger,
      sourceId: source.id,
    });
    expect(totals).toMatchObject({ finished: true, listed: 420, queried: 420 });

    const flagged = await t.db.gameServer.groupBy({
      by: ["address", "suspectedFake"],
      _count: true,
      orderBy: { address: "asc" },
    });
    expect(flagged.map((g) => [g.address, g.suspectedFake, g._count])).toEqual([
      ["127.0.0.21", true, 210],
      ["127.0.0.22", false, 210],
    ]);
  });
});

describe("a fleet listed by two sources", () => {
  const COUNT = 40;
  let t: TestDatabase;
  let fleet: RunningFleet;
  let master: SimValveMaster;
  let steam: SimSteamWebApi;
  let api: TestApi;
  let sources: number[];

  beforeAll(async () => {
    t = await createTestDatabase("gsindex_twice");
    fleet = await startFleet(fleetOn("127.0.0.31", COUNT, 3));
    // Every region lists its servers and 0xFF lists them all again: each server twice within one Valve crawl too.
    master = await startSimValveMaster({ fleet: fleet.specs, rateLimit: false });
    steam = await startSimSteamWebApi({ fleet: fleet.specs, key: KEY });
    sources = [
      (
        await t.db.masterSource.create({
          data: {
            name: "valve",
            kind: "VALVE_UDP",
            host: master.address.host,
            port: master.address.port,
            options: { requestsPerMinute: 0 },
          },
        })
      ).id,
      (
        await t.db.masterSource.create({
          data: {
            name: "steam",
            kind: "STEAM_WEB_API",
            host: "api.steampowered.com",
            options: { baseUrl: steam.baseUrl, requestsPerMinute: 0 },
          },
        })
      ).id,
    ];
    const config = loadConfig({
      STEAM_WEB_API_KEY: KEY,
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      QUERY_TIMEOUT_MS: "3000",
      QUERY_BATCH_SIZE: "10",
      LOG_LEVEL: "silent",
    });
    // At the same time: each crawl lists the servers the other one is listing and writing.
    const totals = await Promise.all(
      sources.map((sourceId) => runCrawlOnce({ config, db: t.db, logger: silentLogger, sourceId })),
    );
    for (const c of totals)
      expect(c).toMatchObject({ finished: true, listed: COUNT, queried: COUNT, answered: COUNT });
    api = await startTestApi({ db: t.db });
  });
  afterAll(async () => {
    await api?.close();
    await steam?.close();
    await master?.close();
    await fleet?.stop();
    await t?.drop();
  });

  const total = (): number => fleet.specs.reduce((n, s) => n + s.state.players, 0);

  it("stores one game server per address, with its count from A2S_INFO", async () => {
    const rows = await t.db.gameServer.findMany({
      select: { address: true, queryPort: true, players: true, playersSource: true },
    });
    expect(rows).toHaveLength(COUNT);
    const players = new Map(fleet.specs.map((s) => [s.queryPort, s.state.players]));
    for (const r of rows)
      expect(r).toMatchObject({ playersSource: "A2S_INFO", players: players.get(r.queryPort) });
    // Two samples per server (one per source's crawl): the history has both, the aggregates count the server once.
    expect(await t.db.serverSample.count()).toBe(2 * COUNT);
  });

  it("counts each server once in games(), maps() and population", async () => {
    const res = await api.gql<{
      games: Array<{ players: number; servers: number }>;
      maps: Array<{ players: number; servers: number }>;
    }>("{ games(first: 500) { players servers } maps(first: 500) { players servers } }");
    expect(res.errors).toBeUndefined();
    const sum = (xs: Array<{ players: number; servers: number }>) =>
      xs.reduce((a, x) => ({ players: a.players + x.players, servers: a.servers + x.servers }), {
        players: 0,
        servers: 0,
      });
    expect(sum(res.data?.games ?? [])).toEqual({ players: total(), servers: COUNT });
    expect(sum(res.data?.maps ?? [])).toEqual({ players: total(), servers: COUNT });

    const pop = await api.gql<{
      population: {
        points: Array<{
          serversSeen: number;
          serversOnline: number;
          playersAvg: number;
          playersPeak: number;
        }>;
      };
    }>(
      "query($from: DateTimeISO!) { population(from: $from, resolution: HOUR) { points { serversSeen serversOnline playersAvg playersPeak } } }",
      { from: new Date(Date.now() - 3 * 3600_000).toISOString() },
    );
    expect(pop.errors).toBeUndefined();
    const points = pop.data?.population.points ?? [];
    expect(points.length).toBeGreaterThan(0);
    // The crawls may straddle an hour: every hour they touched saw each server once.
    for (const p of points) {
      expect(p.serversSeen).toBe(COUNT);
      expect(p.serversOnline).toBeCloseTo(COUNT, 3);
      expect(p.playersAvg).toBeCloseTo(total(), 3);
      expect(p.playersPeak).toBe(total());
    }
  });

  it("says where each count comes from in the API", async () => {
    const res = await api.gql<{
      servers: { nodes: Array<{ players: number; playersSource: string }> };
    }>("{ servers(first: 100) { nodes { players playersSource } } }");
    expect(res.errors).toBeUndefined();
    expect(res.data?.servers.nodes).toHaveLength(COUNT);
    expect(new Set(res.data?.servers.nodes.map((n) => n.playersSource))).toEqual(
      new Set(["A2S_INFO"]),
    );
  });
});

describe("what a crawl covered", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  let master: SimValveMaster;
  let steam: SimSteamWebApi;
  let api: TestApi;
  const LISTED = 20;

  beforeAll(async () => {
    t = await createTestDatabase("gsindex_coverage");
    const specs = fleetOn("127.0.0.41", 24, 4);
    // 4 of them dead: they never answer.
    fleet = await startFleet(
      specs.map((s, i) =>
        i >= 10 && i < 14 ? { ...s, behaviour: { ...s.behaviour, silent: true } } : s,
      ),
    );
    const started = fleet.specs;
    // In master order: 10 live, 4 dead, 3 private addresses and 3 in a blocked range (refused by policy), then 10
    // more that the master never gets to: it answers 2 packets of 10 addresses and then goes silent (rate limit).
    const listing = [
      ...started.slice(0, 14),
      ...listedOnly(started.slice(0, 3), "10.9.0.1", 27015),
      ...listedOnly(started.slice(3, 6), "127.0.0.43", 27015),
      ...started.slice(14),
    ];
    master = await startSimValveMaster({
      fleet: listing,
      addressesPerPacket: 10,
      rateLimit: { packetsPerWindow: 2, windowMs: 600_000, silenceMs: 600_000 },
    });
    // A farm the Steam Web API cannot split below its cap (one address, one name): the listing stays capped.
    const farm = listedOnly(
      Array.from({ length: 150 }, () => ({
        ...started[0]!,
        state: { ...started[0]!.state, name: "same" },
      })),
      "127.0.0.44",
      30000,
    );
    steam = await startSimSteamWebApi({ fleet: farm, key: KEY, maxPerCall: 100 });
    await t.db.blockedRange.createMany({
      data: [
        { cidr: "127.0.0.43/32", reason: "test" },
        { cidr: "127.0.0.44/32", reason: "test" },
      ],
    });

    const valve = await t.db.masterSource.create({
      data: {
        name: "valve",
        kind: "VALVE_UDP",
        host: master.address.host,
        port: master.address.port,
        regions: [0xff],
        options: { requestsPerMinute: 0, retries: 0 },
      },
    });
    const capped = await t.db.masterSource.create({
      data: {
        name: "steam",
        kind: "STEAM_WEB_API",
        host: "api.steampowered.com",
        options: { baseUrl: steam.baseUrl, requestsPerMinute: 0, limitPerCall: 100 },
      },
    });
    const config = loadConfig({
      STEAM_WEB_API_KEY: KEY,
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      QUERY_TIMEOUT_MS: "1500",
      QUERY_RETRIES: "0",
      MASTER_TIMEOUT_MS: "300",
      LOG_LEVEL: "silent",
    });
    expect(
      await runCrawlOnce({ config, db: t.db, logger: silentLogger, sourceId: valve.id }),
    ).toMatchObject({ finished: true, partial: true });
    expect(
      await runCrawlOnce({ config, db: t.db, logger: silentLogger, sourceId: capped.id }),
    ).toMatchObject({ finished: true, partial: true });
    api = await startTestApi({ db: t.db });
  });
  afterAll(async () => {
    await api?.close();
    await steam?.close();
    await master?.close();
    await fleet?.stop();
    await t?.drop();
  });

  type CrawlNode = {
    source: { name: string };
    startedAt: string;
    finishedAt: string;
    listed: number;
    queried: number;
    answered: number;
    failed: number;
    timedOut: number;
    refused: number;
    coverage: number | null;
    listings: number;
    truncatedListings: number;
    cappedListings: number;
    listedAt: string | null;
    listingMs: number | null;
    queryStartedAt: string | null;
    queriedAt: string | null;
    queryMs: number | null;
    dataAsOf: string | null;
    runs: Array<{ truncation: string | null; cappedParts: number; partial: boolean }>;
  };

  async function crawls(): Promise<Map<string, CrawlNode>> {
    const res = await api.gql<{
      crawls: CrawlNode[];
    }>(`{ crawls { source { name } startedAt finishedAt listed queried answered failed timedOut refused coverage
      listings truncatedListings cappedListings listedAt listingMs queryStartedAt queriedAt queryMs dataAsOf runs { truncation cappedParts partial } } }`);
    expect(res.errors).toBeUndefined();
    return new Map((res.data?.crawls ?? []).map((c) => [c.source.name, c]));
  }

  it("answers listed, queried, answered, timed out and refused for a listing cut short", async () => {
    const c = (await crawls()).get("valve") as CrawlNode;
    expect(c).toMatchObject({
      listed: LISTED,
      refused: 6,
      queried: 14,
      answered: 10,
      failed: 4,
      timedOut: 4,
      coverage: 0.5,
    });
    expect(c).toMatchObject({
      listings: 1,
      truncatedListings: 1,
      cappedListings: 0,
      runs: [{ truncation: "CUT_SHORT", cappedParts: 0, partial: true }],
    });
    // The ground truth: what the crawl wrote.
    expect(await t.db.gameServer.count({ where: { notQueryable: true } })).toBe(6 + 100);
    expect(
      await t.db.gameServer.count({ where: { address: "127.0.0.41", status: "ONLINE" } }),
    ).toBe(10);
  });

  it("says when its data is from and how long listing and querying took", async () => {
    const c = (await crawls()).get("valve") as CrawlNode;
    const [started, listedAt, queryStartedAt, queriedAt, finished] = [
      c.startedAt,
      c.listedAt,
      c.queryStartedAt,
      c.queriedAt,
      c.finishedAt,
    ].map((d) => Date.parse(d ?? ""));
    expect(started).toBeLessThanOrEqual(listedAt as number);
    expect(listedAt).toBeLessThanOrEqual(queryStartedAt as number);
    expect(queryStartedAt).toBeLessThanOrEqual(queriedAt as number);
    expect(queriedAt).toBeLessThanOrEqual(finished as number);
    expect(c.listingMs).toBe((listedAt as number) - (started as number));
    expect(c.queryMs).toBe((queriedAt as number) - (queryStartedAt as number));
    expect(c.dataAsOf).toBe(c.queriedAt);
  });

  it("counts a Steam Web API listing that stayed at its cap as capped", async () => {
    const c = (await crawls()).get("steam") as CrawlNode;
    expect(c).toMatchObject({
      listed: 100,
      refused: 100,
      queried: 0,
      answered: 0,
      coverage: 0,
      listings: 1,
      truncatedListings: 1,
      cappedListings: 1,
    });
    expect(c.runs[0]).toMatchObject({ truncation: "CAPPED", partial: true });
    expect(c.runs[0]?.cappedParts).toBeGreaterThan(0);
    // Nothing was queried: no query time.
    expect(c).toMatchObject({ queryStartedAt: null, queriedAt: null, queryMs: null });
    expect(c.dataAsOf).toBe(c.listedAt);
    // Never answered: their counts are the Steam Web API's records.
    expect(
      await t.db.gameServer.count({
        where: { address: "127.0.0.44", playersSource: "STEAM_WEB_API" },
      }),
    ).toBe(100);
  });
});
