/**
 * What a crawler integration test stands on: its own database, a simulated fleet that answers everything,
 * a config on the tests' queue backend with its own queue prefix, and the crawl queues. The test starts
 * its own workers and scheduler and stops them before `close()`.
 */
import { randomBytes } from "node:crypto";
import { createCrawlQueues, type CrawlQueues } from "../../src/crawler/queues";
import { loadConfig, type Config } from "../../src/shared/config";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { createTestDatabase, type TestDatabase } from "./db";
import { testQueueEnv, testQueueStore } from "./queue-backend";
import { dropRedisPrefix } from "./redis";

export interface CrawlFixture {
  t: TestDatabase;
  fleet: RunningFleet;
  config: Config;
  queues: CrawlQueues;
  /** The fleet's servers as `host:queryPort`, for an ADDRESS_LIST source. */
  addresses: () => string[];
  close: () => Promise<void>;
}

export interface CrawlFixtureOptions {
  servers: number;
  seed: number;
  /** Settings on top of the fixture's (loopback allowed, 1 s query timeout, 200 ms job backoff). */
  env?: Record<string, string>;
  /** The queues' retry settings, when not the config's. */
  jobAttempts?: number;
  jobBackoffMs?: number;
}

export async function startCrawlFixture(options: CrawlFixtureOptions): Promise<CrawlFixture> {
  const t = await createTestDatabase();
  let fleet: RunningFleet | undefined;
  try {
    fleet = await startFleet(
      makeFleet({
        count: options.servers,
        seed: options.seed,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0, legacyProtocols: 0 },
      }),
    );
    const config = loadConfig({
      DATABASE_URL: t.url,
      ...testQueueEnv(),
      GSINDEX_QUEUE_PREFIX: `gsindex-test-${randomBytes(4).toString("hex")}`,
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      QUERY_TIMEOUT_MS: "1000",
      JOB_BACKOFF_MS: "200",
      MIGRATE_ON_START: "0",
      ...options.env,
    });
    const queues = createCrawlQueues({
      ...testQueueStore(t.url),
      prefix: config.queuePrefix,
      jobAttempts: options.jobAttempts ?? config.jobAttempts,
      jobBackoffMs: options.jobBackoffMs ?? config.jobBackoffMs,
    });
    const running = fleet;
    return {
      t,
      fleet: running,
      config,
      queues,
      addresses: () => running.specs.map((s) => `${s.host}:${s.queryPort}`),
      close: async () => {
        await queues.close();
        await dropRedisPrefix(config.queuePrefix);
        await running.stop();
        await t.drop();
      },
    };
  } catch (err) {
    await fleet?.stop();
    await t.drop();
    throw err;
  }
}
