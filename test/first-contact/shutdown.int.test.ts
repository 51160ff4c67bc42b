/**
 * SIGTERM to `gsindex serve` (every role) in the middle of a crawl: the process is gone within
 * STOP_GRACE_MS plus a margin, whatever its jobs are doing, and the jobs it did not finish are handed
 * back, so the same crawl completes once the service is started again.
 */
import { randomBytes } from "node:crypto";
import { freePort } from "../../src/shared/free-port";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { testQueueEnv } from "../helpers/queue-backend";
import { dropRedisPrefix } from "../helpers/redis";
import { startServeChild, type ServeChild } from "../helpers/serve-child";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(240_000);

const GRACE_MS = 1000;
// Far below the 35 s seen before the fix, and the 8 s a query batch with a silent server takes here;
// generous for a loaded machine (the target is grace + 2 s).
const EXIT_BOUND_MS = GRACE_MS + 5000;

describe("gsindex serve on SIGTERM mid-crawl", () => {
  let database: TestDatabase;
  let fleet: RunningFleet;
  const prefix = `gsindex-stop-${randomBytes(4).toString("hex")}`;
  const children: ServeChild[] = [];

  beforeAll(async () => {
    database = await createTestDatabase("gsindex_shutdown");
    // About one server in seven never answers: every query batch waits out an 8 s timeout.
    fleet = await startFleet(
      makeFleet({
        count: 200,
        seed: 11,
        basePort: 0,
        mix: { silent: 0.15, malformed: 0, lossy: 0, slow: 0 },
      }),
    );
  });

  afterAll(async () => {
    for (const c of children) await c.kill();
    await fleet?.stop();
    await database?.drop();
    await dropRedisPrefix(prefix);
  });

  const start = async (): Promise<ServeChild> => {
    const child = startServeChild([], {
      DATABASE_URL: database.url,
      ...testQueueEnv(),
      GSINDEX_QUEUE_PREFIX: prefix,
      API_HOST: "127.0.0.1",
      API_PORT: String(await freePort()),
      MANAGEMENT_HOST: "127.0.0.1",
      MANAGEMENT_PORT: String(await freePort()),
      MIGRATE_ON_START: "0",
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      STOP_GRACE_MS: String(GRACE_MS),
      QUERY_TIMEOUT_MS: "8000",
      QUERY_RETRIES: "0",
      QUERY_BATCH_SIZE: "20",
      QUERY_CONCURRENCY: "30",
      MASTER_SOURCES: JSON.stringify([
        {
          name: "fixed",
          kind: "ADDRESS_LIST",
          host: "local",
          intervalMs: 3_600_000,
          options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
        },
      ]),
    });
    children.push(child);
    return child;
  };

  const fixedCrawl = async () => {
    const crawls = await database.db.crawl.findMany({
      where: { source: { name: "fixed" } },
      orderBy: { id: "asc" },
    });
    return crawls[0] ?? null;
  };

  it("exits within the grace period and the crawl completes after a restart", async () => {
    const first = await start();
    await waitFor(
      "the crawl to be under way",
      async () => {
        const crawl = await fixedCrawl();
        return crawl !== null && crawl.finishedAt === null && crawl.queried > 0;
      },
      { timeoutMs: 90_000, intervalMs: 100, describe: () => first.lines.slice(-20).join("\n") },
    );

    const signalledAt = Date.now();
    first.child.kill("SIGTERM");
    const exit = await first.exited;
    const tookMs = exit.atMs - signalledAt;
    expect({ code: exit.code, withinBound: tookMs < EXIT_BOUND_MS, tookMs }).toEqual({
      code: 0,
      withinBound: true,
      tookMs,
    });
    const stopped = await fixedCrawl();
    expect(stopped?.finishedAt).toBeNull();

    await start();
    await waitFor(
      "the crawl to finish after the restart",
      async () => (await fixedCrawl())?.finishedAt != null,
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    const crawl = await fixedCrawl();
    expect(crawl?.listed).toBe(200);
    expect(crawl?.queried).toBe(200);
  });

  it("takes the same stop request delivered twice at once (Ctrl-C to the process group, forwarded by npm) as one graceful stop", async () => {
    const child = await start();
    await waitFor(
      "gsindex serve's 'gsindex serving' line",
      () => child.lines.some((l) => l.includes("gsindex serving")),
      { timeoutMs: 90_000, intervalMs: 100, describe: () => child.lines.slice(-20).join("\n") },
    );
    child.child.kill("SIGINT");
    child.child.kill("SIGINT");
    const exit = await child.exited;
    expect(exit.code).toBe(0);
    expect(child.lines.some((l) => l.includes("second signal"))).toBe(false);
    expect(child.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });
});
