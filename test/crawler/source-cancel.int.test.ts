/**
 * Disabling or removing a source stops its crawl (issue 12 item 6): a crawl of a simulated fleet is
 * running under BullMQ workers when the API's updateSource(enabled: false) or removeSource arrives;
 * from a few seconds after the mutation on, no packet reaches the fleet (counted by the simulated
 * servers), the crawl is closed as cancelled, and none of its jobs is left queued.
 */
import {
  createQueueSink,
  enqueueCrawl,
  removeSourceJobs,
  type CrawlQueues,
} from "../../src/crawler/queues";
import type { Querier } from "../../src/crawler/querier";
import { buildCrawlDeps, createDefaultQuerier } from "../../src/crawler/runtime";
import { startWorkers, type RunningWorkers } from "../../src/crawler/workers";
import { type Config } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { type RunningFleet } from "../../src/simulator/fleet";
import { auth, startTestApi, type TestApi } from "../graphql/helpers/api";
import { testWorkerSettings } from "../helpers/workers";
import { type TestDatabase } from "../helpers/db";
import { testQueueStore } from "../helpers/queue-backend";
import { startCrawlFixture, type CrawlFixture } from "../helpers/crawl-fixture";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(180_000);

const SERVERS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("cancelling a source", () => {
  let f: CrawlFixture;
  let t: TestDatabase;
  let fleet: RunningFleet;
  let config: Config;
  let queues: CrawlQueues;
  let workers: RunningWorkers | null = null;
  let api: TestApi;

  beforeAll(async () => {
    f = await startCrawlFixture({
      servers: SERVERS,
      seed: 9,
      env: {
        // 300 simulated servers on 127.0.0.1: more ports on one IP than the farm rule allows.
        FARM_RULE_EXEMPT_RANGES: "127.0.0.1",
        QUERY_BATCH_SIZE: "10",
      },
      jobAttempts: 3,
      jobBackoffMs: 200,
    });
    ({ t, fleet, config, queues } = f);
    const q = queues;
    api = await startTestApi({
      db: t.db,
      enqueue: { cancelSource: async (source) => void (await removeSourceJobs(q, source)) },
    });
    const real = createDefaultQuerier(config);
    // Slowed, so the crawl is still running when the mutation comes (~30 batches of 10, 2 at a time).
    const querier: Querier = {
      query: async (target, signal) => (await sleep(250), real.query(target, signal)),
    };
    workers = startWorkers(
      buildCrawlDeps({
        config,
        db: t.db,
        logger: silentLogger,
        sink: createQueueSink(queues),
        querier,
      }),
      testWorkerSettings(testQueueStore(t.url), config.queuePrefix, { concurrency: 2 }),
      silentLogger,
    );
  });

  afterAll(async () => {
    await api?.close();
    await workers?.stop();
    await f?.close();
  });

  async function crawlThen(
    name: string,
    mutation: (sourceId: number) => Promise<void>,
  ): Promise<{ crawlKey: string }> {
    const source = await t.db.masterSource.create({
      data: {
        name,
        kind: "ADDRESS_LIST",
        host: "list",
        options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
      },
    });
    const base = fleet.stats().requests;
    await enqueueCrawl(queues, source.id);
    // Mid-crawl: some servers queried, most not yet.
    await waitFor("20 queries of the crawl", () => fleet.stats().requests >= base + 20, {
      timeoutMs: 30_000,
    });
    expect(fleet.stats().requests).toBeGreaterThanOrEqual(base + 20);
    const crawl = await t.db.crawl.findFirstOrThrow({ where: { sourceId: source.id } });
    await mutation(source.id);
    // Running jobs notice within a second; queries already on the wire finish within their timeout.
    await sleep(3000);
    const after = fleet.stats().requests;
    await sleep(5000);
    expect(fleet.stats().requests).toBe(after);
    const left = [
      ...(await queues.crawl.getJobs(["wait", "delayed", "prioritized", "active"])),
      ...(await queues.query.getJobs(["wait", "delayed", "prioritized", "active"])),
    ];
    expect(left.map((j) => j.id).filter((id) => id?.includes(crawl.key))).toEqual([]);
    return { crawlKey: crawl.key };
  }

  it("stops the crawl of a source disabled through the API", async () => {
    const { crawlKey } = await crawlThen("to-disable", async (id) => {
      const res = await api.gql(
        `mutation { updateSource(id: ${id}, input: { enabled: false }) { id enabled } }`,
        {},
        auth(),
      );
      expect(res.errors).toBeUndefined();
    });
    expect(await t.db.crawl.findUniqueOrThrow({ where: { key: crawlKey } })).toMatchObject({
      partial: true,
      error: "cancelled: its source was disabled",
    });
    const crawl = await t.db.crawl.findUniqueOrThrow({ where: { key: crawlKey } });
    expect(crawl.finishedAt).toEqual(expect.any(Date));
    // Stopped, not finished: most of its batches never ran.
    const batches = await t.db.crawlBatch.findMany({
      where: { crawlId: crawl.id },
      select: { doneAt: true },
    });
    expect(batches.filter((b) => b.doneAt === null).length).toBeGreaterThan(batches.length / 2);
  });

  it("stops the crawl of a source removed through the API", async () => {
    const { crawlKey } = await crawlThen("to-remove", async (id) => {
      const res = await api.gql(`mutation { removeSource(id: ${id}) }`, {}, auth());
      expect(res.errors).toBeUndefined();
    });
    expect(await t.db.crawl.findUnique({ where: { key: crawlKey } })).toBeNull();
  });
});
