/**
 * Querying decoupled from listing (QUERY_FROM_INDEX, docs/crawler.md "Cadence"): a simulated fleet behind a
 * rate-limited simulated Valve master, listed at a pace that makes one listing take ~20 s, while the index
 * source re-queries every known server on a 2 s interval. Scheduled by the real scheduler and run by BullMQ
 * workers against real PostgreSQL, the queues on Redis (or, without one, on PostgreSQL: test/helpers/
 * queue-backend.ts). The checks count crawls, never time them: while one listing
 * runs, the index crawls query the whole fleet several times over; the listing itself queries only servers
 * never queried; once a server drops out of the master's list and is delisted, index crawls stop querying it.
 */
import pino from "pino";
import { createQueueSink, type CrawlQueues } from "../../src/crawler/queues";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import {
  startScheduler,
  upsertIndexSource,
  type RunningScheduler,
} from "../../src/crawler/scheduler";
import { INDEX_SOURCE_NAME } from "../../src/crawler/sources/index-source";
import { startWorkers, type RunningWorkers } from "../../src/crawler/workers";
import { type Config } from "../../src/shared/config";
import { type RunningFleet } from "../../src/simulator/fleet";
import { startSimValveMaster, type SimValveMaster } from "../../src/simulator/master";
import { testWorkerSettings } from "../helpers/workers";
import { type TestDatabase } from "../helpers/db";
import { testQueueStore } from "../helpers/queue-backend";
import { startCrawlFixture, type CrawlFixture } from "../helpers/crawl-fixture";
import { waitFor } from "../helpers/wait-for";

// Liveness bounds, not timings: the waits below are four to six times what the paced listings take on a
// quiet machine, since a loaded one (2 cores shared with benches) once ran past a 2 minute wait.
jest.setTimeout(900_000);

const FLEET = 40;
const QUERY_INTERVAL_MS = 2000;
// 40 servers at 6 a page is 7 requests; at 20 requests a minute, about 20 s a listing (ten query intervals).
const ADDRESSES_PER_PACKET = 6;
const REQUESTS_PER_MINUTE = 20;
// The master's own limit, above the client's pace: a listing is slow because it is paced, as against Valve.
const MASTER_LIMIT = { packetsPerWindow: 10, windowMs: 10_000, silenceMs: 2000 };

describe("index crawls query known servers on their own interval", () => {
  let f: CrawlFixture;
  let t: TestDatabase;
  let fleet: RunningFleet;
  let master: SimValveMaster | null = null;
  let shrunk: SimValveMaster | null = null;
  let config: Config;
  let queues: CrawlQueues;
  let workers: RunningWorkers | null = null;
  let scheduler: RunningScheduler | null = null;

  beforeAll(async () => {
    f = await startCrawlFixture({
      servers: FLEET,
      seed: 14,
      env: {
        FARM_RULE_EXEMPT_RANGES: "127.0.0.0/8",
        MASTER_TIMEOUT_MS: "3000",
        QUERY_FROM_INDEX: "1",
        QUERY_INTERVAL_MS: String(QUERY_INTERVAL_MS),
        DELIST_AFTER_MISSED_CRAWLS: "1",
      },
    });
    ({ t, fleet, config, queues } = f);
  });

  afterAll(async () => {
    await scheduler?.stop();
    await workers?.stop();
    await master?.close();
    await shrunk?.close();
    await f?.close();
  });

  it("queries the whole fleet several times during one listing, and stops querying a delisted server", async () => {
    master = await startSimValveMaster({
      fleet: fleet.specs,
      addressesPerPacket: ADDRESSES_PER_PACKET,
      rateLimit: MASTER_LIMIT,
    });
    const valve = await t.db.masterSource.create({
      data: {
        name: "valve-paced",
        kind: "VALVE_UDP",
        host: master.address.host,
        port: master.address.port,
        regions: [0xff],
        intervalMs: 1000,
        options: { requestsPerMinute: REQUESTS_PER_MINUTE, retries: 0 },
      },
    });
    await upsertIndexSource(t.db, {
      enabled: config.queryFromIndex,
      intervalMs: config.queryIntervalMs,
    });
    const index = await t.db.masterSource.findUniqueOrThrow({ where: { name: INDEX_SOURCE_NAME } });
    const logger = pino({ level: "warn" });
    const deps = buildCrawlDeps({ config, db: t.db, logger, sink: createQueueSink(queues) });
    workers = startWorkers(
      deps,
      testWorkerSettings(testQueueStore(t.url), config.queuePrefix),
      logger,
    );
    scheduler = await startScheduler(t.db, queues, logger, 2500);

    const finishedListings = () =>
      t.db.crawl.findMany({
        where: { sourceId: valve.id, finishedAt: { not: null } },
        orderBy: { startedAt: "asc" },
      });
    await waitFor(
      "two listings of the paced master",
      async () => (await finishedListings()).length >= 2,
      { timeoutMs: 240_000 },
    );
    const [first, second] = await finishedListings();

    // The first listing found the fleet and queried it (none of it was ever queried): no query interval's wait.
    expect(first!.listed).toBe(FLEET);
    expect(first!.queried).toBe(FLEET);
    // The next one lists the same servers and queries none of them: the index source does.
    expect(second!.listed).toBe(FLEET);
    expect(second!.queried).toBe(0);
    // While that one listing ran, index crawls queried every known server more than once.
    const during = await t.db.crawl.findMany({
      where: {
        sourceId: index.id,
        startedAt: { gte: second!.startedAt },
        finishedAt: { lte: second!.finishedAt! },
      },
    });
    expect(during.length).toBeGreaterThanOrEqual(2);
    for (const c of during)
      expect({ listed: c.listed, queried: c.queried }).toEqual({ listed: FLEET, queried: FLEET });
    // One game_server row per server: the index crawls listed nothing, the master's crawls own the rows.
    expect(await t.db.gameServer.count()).toBe(FLEET);
    expect(await t.db.gameServer.count({ where: { sourceId: valve.id } })).toBe(FLEET);

    // The master stops listing one server; after one complete listing without it, it is delisted.
    const gone = fleet.specs[0]!;
    shrunk = await startSimValveMaster({
      fleet: fleet.specs.slice(1),
      addressesPerPacket: ADDRESSES_PER_PACKET,
      rateLimit: MASTER_LIMIT,
    });
    await t.db.masterSource.update({
      where: { id: valve.id },
      data: { port: shrunk.address.port },
    });
    const goneRow = await t.db.gameServer.findFirstOrThrow({
      where: { address: gone.host, queryPort: gone.queryPort },
    });
    await waitFor(
      "the missing server delisted",
      async () =>
        (await t.db.gameServer.findUniqueOrThrow({ where: { id: goneRow.id } })).status ===
        "DELISTED",
      {
        timeoutMs: 240_000,
      },
    );
    const delistedAt = new Date();
    const after = () =>
      t.db.crawl.findMany({
        where: { sourceId: index.id, startedAt: { gt: delistedAt }, finishedAt: { not: null } },
      });
    await waitFor("two index crawls after the delisting", async () => (await after()).length >= 2, {
      timeoutMs: 120_000,
    });
    const later = await after();
    for (const c of later)
      expect({ listed: c.listed, queried: c.queried }).toEqual({
        listed: FLEET - 1,
        queried: FLEET - 1,
      });
    // An index crawl planned before the delisting may still have queried it; none after that one did.
    const lastQueried = (await t.db.gameServer.findUniqueOrThrow({ where: { id: goneRow.id } }))
      .lastQueriedAt;
    expect(lastQueried!.getTime()).toBeLessThan(
      Math.max(...later.map((c) => c.startedAt.getTime())),
    );
  });
});
