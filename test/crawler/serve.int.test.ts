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

  it("schedules every configured source and crawls it repeatedly", async () => {
    const prefix = `gsindex-test-${randomBytes(4).toString("hex")}`;
    const config = loadConfig({
      DATABASE_URL: t.url,
      ...testQueueEnv(),
      GSINDEX_QUEUE_PREFIX: prefix,
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      MIGRATE_ON_START: "0",
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
      await waitFor(
        "two finished crawls",
        async () => (await t.db.crawl.count({ where: { finishedAt: { not: null } } })) >= 2,
        { timeoutMs: 40_000, intervalMs: 200 },
      );
      expect(
        await t.db.crawl.count({ where: { finishedAt: { not: null } } }),
      ).toBeGreaterThanOrEqual(2);
      expect(await t.db.gameServer.count({ where: { status: "ONLINE" } })).toBe(5);
      const schedulers = (await queues.crawl.getJobSchedulers()).map((s) => s.key).sort();
      expect(schedulers).toEqual(["retention", "sweep-fixed"]);
    } finally {
      await service.stop();
      await queues.crawl.obliterate({ force: true }).catch(() => undefined);
      await queues.query.obliterate({ force: true }).catch(() => undefined);
      await queues.close();
    }
  });
});
