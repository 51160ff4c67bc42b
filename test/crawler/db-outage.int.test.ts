/**
 * A PostgreSQL outage mid-crawl loses nothing (issue 11 item 4). The test starts its OWN PostgreSQL
 * (the local binaries, on a free loopback port; never the shared one), crawls a simulated fleet with
 * BullMQ workers, stops that PostgreSQL for ~20 s right after the first batch is written (the issue's
 * 30 s, shortened), starts it again, and checks that the crawl finished complete, with every server
 * written once, and that no job failed for good (jobs wait for the database instead of spending their
 * attempts: 3 attempts with 200 ms backoff are gone within a second of the outage otherwise).
 */
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { Client } from "pg";
import pino from "pino";
import {
  createCrawlQueues,
  createQueueSink,
  enqueueCrawl,
  type CrawlQueues,
  type QueueStore,
} from "../../src/crawler/queues";
import type { Querier } from "../../src/crawler/querier";
import { buildCrawlDeps, createDefaultQuerier } from "../../src/crawler/runtime";
import { startWorkers, type RunningWorkers } from "../../src/crawler/workers";
import { migrate } from "../../src/migrate";
import { loadConfig } from "../../src/shared/config";
import { createDb, type Db } from "../../src/shared/db";
import { withDatabase } from "../../src/shared/services";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { startOwnPostgres, type OwnPostgres } from "../../src/shared/own-services";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { testQueueEnv, testRedisUrl } from "../helpers/queue-backend";
import { dropRedisPrefix } from "../helpers/redis";
import { waitFor } from "../helpers/wait-for";
import { testWorkerSettings } from "../helpers/workers";

jest.setTimeout(300_000);

const SERVERS = 200;
const OUTAGE_MS = 20_000;
const QUERY_DELAY_MS = 300;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a PostgreSQL outage mid-crawl", () => {
  let pg: OwnPostgres;
  let db: Db;
  let fleet: RunningFleet;
  let queues: CrawlQueues;
  let store: QueueStore;
  let queueDb: TestDatabase | null = null;
  let workers: RunningWorkers | null = null;
  const prefix = `gsindex-test-${randomBytes(4).toString("hex")}`;
  const logLines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    pg = await startOwnPostgres();
    const admin = new Client({ connectionString: pg.url });
    await admin.connect();
    await admin.query("CREATE DATABASE outage");
    await admin.end();
    const serverUrl = pg.url;
    const url = withDatabase(serverUrl, "outage");
    await migrate(url);
    db = createDb(url, { max: 8 });
    fleet = await startFleet(
      makeFleet({
        count: SERVERS,
        seed: 5,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0, legacyProtocols: 0 },
      }),
    );
    // The queues stay up while the crawl's database is down: on Redis, or without one in a database of the
    // tests' PostgreSQL server, not the one that stops.
    store =
      testRedisUrl === null
        ? {
            backend: "postgres",
            databaseUrl: (queueDb = await createTestDatabase("gsindex_outage_queue")).url,
          }
        : { backend: "redis", redisUrl: testRedisUrl };
    queues = createCrawlQueues({ ...store, prefix, jobAttempts: 3, jobBackoffMs: 200 });
  });

  afterAll(async () => {
    await workers?.stop();
    await queues?.close();
    await dropRedisPrefix(prefix);
    await queueDb?.drop();
    await fleet?.stop();
    await db?.$disconnect();
    await pg?.destroy();
  });

  it("waits for the database and finishes the crawl with every server written", async () => {
    const config = loadConfig({
      DATABASE_URL: "postgres://unused",
      ...testQueueEnv(),
      GSINDEX_QUEUE_PREFIX: prefix,
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      QUERY_TIMEOUT_MS: "1500",
      QUERY_BATCH_SIZE: "10",
      JOB_ATTEMPTS: "3",
      JOB_BACKOFF_MS: "200",
      MIGRATE_ON_START: "0",
    });
    const source = await db.masterSource.create({
      data: {
        name: "outage-list",
        kind: "ADDRESS_LIST",
        host: "list",
        options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
      },
    });
    const real = createDefaultQuerier(config);
    // Real queries of the simulated fleet, slowed down so the crawl is still running when the database stops.
    const querier: Querier = {
      query: async (target, signal) => (await sleep(QUERY_DELAY_MS), real.query(target, signal)),
    };
    const logSink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString("utf8").split("\n"))
          if (line.trim() !== "") logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: "info" }, logSink);
    let firstBatch: () => void = () => undefined;
    const batchWritten = new Promise<void>((resolve) => (firstBatch = resolve));
    const deps = buildCrawlDeps({
      config,
      db,
      logger,
      sink: createQueueSink(queues),
      querier,
      onEvent: (e) => e.type === "batch" && firstBatch(),
    });
    workers = startWorkers(
      deps,
      testWorkerSettings(store, prefix, {
        concurrency: 2,
        outageWaitMs: 120_000,
        outageRetryMs: 1000,
      }),
      logger,
    );
    const now = Date.now();
    await enqueueCrawl(queues, source.id, now);
    await batchWritten;

    await pg.stop();
    await sleep(OUTAGE_MS);
    await pg.start();

    const crawl = await waitFor(
      "the crawl to finish",
      () => db.crawl.findFirst({ where: { sourceId: source.id, finishedAt: { not: null } } }),
      { timeoutMs: 120_000, intervalMs: 200, retryErrors: true },
    );
    expect(crawl).toMatchObject({ partial: false, error: null, listed: SERVERS });
    // Every server written once for this crawl: one sample each, none lost, none twice.
    expect(await db.serverSample.count({ where: { crawlId: crawl.id } })).toBe(SERVERS);
    expect(crawl.written).toBe(SERVERS);
    expect(await queues.crawl.getFailedCount()).toBe(0);
    expect(await queues.query.getFailedCount()).toBe(0);
    expect(logLines.filter((l) => l.msg === "job failed for good")).toEqual([]);
    // The outage was seen and waited out.
    expect(
      logLines.some(
        (l) => l.msg === "dependency unreachable: jobs wait for it without spending attempts",
      ),
    ).toBe(true);
  });
});
