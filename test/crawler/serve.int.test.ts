/**
 * `gsindex serve --role scheduler,worker` in this process: sources from MASTER_SOURCES get a job
 * scheduler each, crawls start on their own, and stop() ends everything cleanly.
 */
import { randomBytes } from "node:crypto";
import { startService } from "../../src/service/service";
import { createCrawlQueues } from "../../src/crawler/queues";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { testQueueEnv, testQueueStore } from "../helpers/queue-backend";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(60_000);

describe("serve (scheduler + worker)", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  beforeAll(async () => {
    t = await createTestDatabase();
    fleet = await startFleet(
      makeFleet({
        count: 5,
        seed: 9,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0 },
      }),
    );
  });
  afterAll(async () => {
    await fleet?.stop();
    await t?.drop();
  });

  it("schedules every configured source and the index, and queries the servers from the index", async () => {
    const prefix = `gsindex-test-${randomBytes(4).toString("hex")}`;
    const config = loadConfig({
      DATABASE_URL: t.url,
      ...testQueueEnv(),
      GSINDEX_QUEUE_PREFIX: prefix,
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      MIGRATE_ON_START: "0",
      // QUERY_FROM_INDEX is left to its default (on), and QUERY_INTERVAL_MS to this.
      CRAWL_INTERVAL_MS: "1000",
      MASTER_SOURCES: JSON.stringify([
        {
          name: "fixed",
          kind: "ADDRESS_LIST",
          host: "local",
          intervalMs: 1000,
          options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
        },
      ]),
    });
    const service = await startService(config, ["scheduler", "worker"], silentLogger);
    const queues = createCrawlQueues({
      ...testQueueStore(t.url),
      prefix,
      jobAttempts: 1,
      jobBackoffMs: 0,
    });
    try {
      const finished = (name: string) =>
        t.db.crawl.findMany({
          where: { finishedAt: { not: null }, source: { name } },
          orderBy: { id: "asc" },
        });
      await waitFor(
        "two finished crawls of each source",
        async () => (await finished("fixed")).length >= 2 && (await finished("index")).length >= 2,
        { timeoutMs: 40_000, intervalMs: 200 },
      );
      expect(await t.db.gameServer.count({ where: { status: "ONLINE" } })).toBe(5);
      const schedulers = (await queues.crawl.getJobSchedulers()).map((s) => s.key).sort();
      expect(schedulers).toEqual(["retention", "sweep-fixed", "sweep-index"]);
      // The listing queries a server only while it is new (unless an index crawl got to it first); the index
      // crawls query every known one, so each server has a sample from its discovery and from an index crawl.
      const listings = await finished("fixed");
      expect(listings.reduce((n, c) => n + c.queried, 0)).toBeLessThanOrEqual(5);
      expect(listings.at(-1)!.queried).toBe(0);
      const indexCrawls = await finished("index");
      expect(indexCrawls.some((c) => c.queried === 5 && c.answered === 5)).toBe(true);
      const perServer = await t.db.serverSample.groupBy({ by: ["gameServerId"], _count: true });
      expect(perServer).toHaveLength(5);
      for (const s of perServer) expect(s._count).toBeGreaterThanOrEqual(2);
    } finally {
      await service.stop();
      await queues.crawl.obliterate({ force: true }).catch(() => undefined);
      await queues.query.obliterate({ force: true }).catch(() => undefined);
      await queues.close();
    }
  });
});
