/**
 * Redis restarted empty in the middle of a crawl (issue 11 item 4): the queued query batches are gone, but
 * PostgreSQL still knows every step the crawl has left. The next tick of the source, which finds the crawl
 * running and is skipped, enqueues those steps again, and the crawl completes with every server sampled
 * once, instead of blocking every later tick of the source until the crawl counts as stale (30 minutes).
 * Runs against a redis-server of its own, killed and restarted empty on the same port.
 */
import pino from "pino";
import { crawlKeyOf, listRun, startCrawl } from "../../src/crawler/crawl-jobs";
import {
  createCrawlQueues,
  createQueueSink,
  enqueueCrawl,
  type CrawlQueues,
} from "../../src/crawler/queues";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import { createListSourceFactory } from "../../src/crawler/sources";
import { startWorkers, type RunningWorkers } from "../../src/crawler/workers";
import { loadConfig, type Config } from "../../src/shared/config";
import { startOwnRedis, type OwnRedis } from "../../src/shared/own-services";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { describeWithRedisServer } from "../helpers/queue-backend";
import { waitFor } from "../helpers/wait-for";
import { testWorkerSettings } from "../helpers/workers";

jest.setTimeout(180_000);

const FLEET_SIZE = 300;

describeWithRedisServer("a crawl whose queued jobs Redis lost", () => {
  let t: TestDatabase;
  let redis: OwnRedis;
  let fleet: RunningFleet;
  let config: Config;
  let queues: CrawlQueues;
  let workers: RunningWorkers | null = null;

  beforeAll(async () => {
    t = await createTestDatabase("gsindex_redis_lost");
    redis = await startOwnRedis();
    fleet = await startFleet(
      makeFleet({
        count: FLEET_SIZE,
        seed: 11,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0, legacyProtocols: 0 },
      }),
    );
    config = loadConfig({
      DATABASE_URL: t.url,
      REDIS_URL: redis.url,
      GSINDEX_QUEUE_PREFIX: "gsindex-redis-lost",
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      QUERY_TIMEOUT_MS: "3000",
      JOB_BACKOFF_MS: "200",
      MIGRATE_ON_START: "0",
    });
    queues = createCrawlQueues({
      redisUrl: redis.url,
      prefix: config.queuePrefix,
      jobAttempts: config.jobAttempts,
      jobBackoffMs: config.jobBackoffMs,
    });
  });

  afterAll(async () => {
    await workers?.stop();
    await queues?.close();
    await fleet?.stop();
    await redis?.destroy();
    await t?.drop();
  });

  it("enqueues the lost steps again at the next tick, and the crawl completes with every server sampled once", async () => {
    const logger = pino({ level: "silent" });
    const source = await t.db.masterSource.create({
      data: {
        name: "lost-jobs",
        kind: "ADDRESS_LIST",
        host: "list",
        intervalMs: 60_000,
        options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
      },
    });
    const deps = buildCrawlDeps({
      config,
      db: t.db,
      logger,
      sink: createQueueSink(queues),
      listSources: createListSourceFactory(config),
    });

    // A crawl that got as far as a worker takes it before Redis dies: opened, listed, its query batches queued.
    const opened = await startCrawl(deps, {
      sourceId: source.id,
      key: crawlKeyOf(source.name, Date.now()),
      startedAt: new Date(),
    });
    if (!opened) throw new Error("the crawl did not open");
    for (const run of await t.db.crawlRun.findMany({ where: { crawlId: opened.id } })) {
      await listRun(deps, { crawlId: opened.id, crawlKey: opened.key, runId: Number(run.id) });
    }
    const crawl = opened;
    const pending = await t.db.crawlBatch.count({ where: { crawlId: crawl.id, doneAt: null } });
    expect(pending).toBeGreaterThan(0);
    expect(await queues.query.count()).toBeGreaterThan(0);

    await redis.kill();
    await redis.restart();
    await waitFor(
      "the queue to reconnect to the new, empty Redis",
      async () => (await queues.query.count()) === 0,
      { timeoutMs: 30_000, retryErrors: true },
    );

    // The source's next tick: it finds the crawl running, is skipped, and hands the crawl its steps again.
    workers = startWorkers(
      deps,
      testWorkerSettings({ redisUrl: redis.url }, config.queuePrefix, { graceMs: 2000 }),
      logger,
    );
    await enqueueCrawl(queues, source.id);
    const finished = await waitFor(
      "the crawl that lost its jobs to finish",
      async () => {
        const c = await t.db.crawl.findUnique({ where: { id: crawl.id } });
        return c?.finishedAt ? c : null;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(finished.partial).toBe(false);
    expect(finished.listed).toBe(FLEET_SIZE);
    expect(finished.queried).toBe(FLEET_SIZE);
    expect(await t.db.crawlBatch.count({ where: { crawlId: crawl.id, doneAt: null } })).toBe(0);
    // Every server sampled once by this crawl: nothing lost, nothing written twice.
    const [samples] = await t.db.$queryRaw<{ n: bigint; servers: bigint }[]>`
      SELECT count(*) AS n, count(DISTINCT game_server_id) AS servers FROM server_sample WHERE crawl_id = ${crawl.id}`;
    expect(Number(samples!.n)).toBe(FLEET_SIZE);
    expect(Number(samples!.servers)).toBe(FLEET_SIZE);
    // The skipped tick opened no crawl beside the running one: it is made up only once that crawl has
    // closed (the catch-up of docs/crawler.md "Cadence"), so any second crawl starts after it finished.
    expect(
      await t.db.crawl.count({
        where: {
          sourceId: source.id,
          id: { not: crawl.id },
          startedAt: { lt: finished.finishedAt! },
        },
      }),
    ).toBe(0);
  });
});
