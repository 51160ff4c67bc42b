/**
 * A skipped tick is made up at the close of the crawl that made it skip (docs/crawler.md "Cadence"), not one
 * interval later: a source on a one-hour interval (so no tick of its own comes during the test) whose first
 * listing is held open; a tick that arrives meanwhile is skipped, and when the held crawl closes the next
 * crawl starts at once. BullMQ workers on real PostgreSQL and the tests' queue backend (test/helpers/queue-backend.ts); the checks are about which crawls exist,
 * never how long anything took.
 */
import pino from "pino";
import { crawlKeyOf, type CrawlEvent } from "../../src/crawler/crawl-jobs";
import {
  JOB,
  catchUpJobIdOf,
  createQueueSink,
  enqueueCrawl,
  schedulerIdOf,
  type CrawlQueues,
  type StartCrawlData,
} from "../../src/crawler/queues";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import { createListSourceFactory } from "../../src/crawler/sources";
import { startWorkers, type RunningWorkers } from "../../src/crawler/workers";
import { type Config } from "../../src/shared/config";
import { type RunningFleet } from "../../src/simulator/fleet";
import { testWorkerSettings } from "../helpers/workers";
import { type TestDatabase } from "../helpers/db";
import { testQueueStore } from "../helpers/queue-backend";
import { startCrawlFixture, type CrawlFixture } from "../helpers/crawl-fixture";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(180_000);

const HOUR_MS = 3600_000;

describe("a skipped tick is made up at the close of the crawl it found running", () => {
  let f: CrawlFixture;
  let t: TestDatabase;
  let fleet: RunningFleet;
  let config: Config;
  let queues: CrawlQueues;
  let workers: RunningWorkers | null = null;

  beforeAll(async () => {
    f = await startCrawlFixture({ servers: 5, seed: 11 });
    ({ t, fleet, config, queues } = f);
  });

  afterAll(async () => {
    await workers?.stop();
    await f?.close();
  });

  it("starts the next crawl when the overrunning one closes, and holds nothing for a crawl that skipped no tick", async () => {
    const source = await t.db.masterSource.create({
      data: {
        name: "held-list",
        kind: "ADDRESS_LIST",
        host: "list",
        intervalMs: HOUR_MS,
        options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
      },
    });
    const real = createListSourceFactory(config);
    let listings = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const events: CrawlEvent[] = [];
    const logger = pino({ level: "silent" });
    const deps = buildCrawlDeps({
      config,
      db: t.db,
      logger,
      sink: createQueueSink(queues),
      // The first listing waits for the test (a crawl overrunning its interval); later ones list at once.
      listSources: (s) => {
        const inner = real(s);
        return {
          splits: () => inner.splits(),
          list: async (split, signal, resume) => {
            if (listings++ === 0) await held;
            return inner.list(split, signal, resume);
          },
        };
      },
      onEvent: (e) => events.push(e),
    });
    workers = startWorkers(
      deps,
      testWorkerSettings(testQueueStore(t.url), config.queuePrefix),
      logger,
    );

    await enqueueCrawl(queues, source.id);
    const first = await waitFor(
      "the first crawl to open and start listing",
      async () => listings > 0 && (await t.db.crawl.findFirst({ where: { sourceId: source.id } })),
      { timeoutMs: 60_000 },
    );
    // A tick of the source's scheduler while the first crawl runs (as BullMQ names a scheduler's jobs).
    const tickMs = Date.now();
    await queues.crawl.add(JOB.startCrawl, { sourceId: source.id } satisfies StartCrawlData, {
      jobId: `repeat:${schedulerIdOf(source.name)}:${tickMs}`,
    });
    await waitFor("the tick to be skipped", () => events.some((e) => e.type === "skipped"), {
      timeoutMs: 60_000,
    });
    // The skip left a start held for the running crawl's close, not one for the next tick an hour away.
    const heldJob = await queues.crawl.getJob(catchUpJobIdOf(first.key));
    expect(heldJob).toBeDefined();
    expect(await heldJob!.isDelayed()).toBe(true);
    expect(heldJob!.data).toMatchObject({ sourceId: source.id, catchUp: true });

    release();
    const crawls = await waitFor(
      "the catch-up crawl to run after the first one closed",
      async () => {
        const rows = await t.db.crawl.findMany({
          where: { sourceId: source.id },
          orderBy: { startedAt: "asc" },
        });
        return rows.length === 2 && rows.every((c) => c.finishedAt !== null) && rows;
      },
      { timeoutMs: 120_000 },
    );
    const [closed, catchUp] = crawls as [(typeof crawls)[0], (typeof crawls)[0]];
    expect(closed.key).toBe(first.key);
    expect(catchUp.startedAt.getTime()).toBeGreaterThanOrEqual(closed.finishedAt!.getTime());
    // Keyed by the skipped start, so a retried catch-up job opens the same crawl.
    expect(catchUp.key).toBe(
      crawlKeyOf(source.name, (heldJob!.data as StartCrawlData).requestedAtMs!),
    );
    expect(catchUp.listed).toBe(fleet.specs.length);
    // The catch-up crawl skipped no tick: nothing is held for its close.
    expect(await queues.crawl.getJob(catchUpJobIdOf(catchUp.key))).toBeUndefined();
    expect(events.filter((e) => e.type === "skipped")).toHaveLength(1);
  });

  it("does not make up a tick of a source disabled meanwhile", async () => {
    const source = await t.db.masterSource.create({
      data: { name: "gone-list", kind: "ADDRESS_LIST", host: "list", intervalMs: HOUR_MS },
    });
    await t.db.masterSource.update({ where: { id: source.id }, data: { enabled: false } });
    const job = await queues.crawl.add(
      JOB.startCrawl,
      { sourceId: source.id, requestedAtMs: Date.now(), catchUp: true } satisfies StartCrawlData,
      { jobId: catchUpJobIdOf("gone-list-1") },
    );
    await waitFor("the catch-up job to complete", async () => await job.isCompleted(), {
      timeoutMs: 60_000,
    });
    expect(await t.db.crawl.count({ where: { sourceId: source.id } })).toBe(0);
  });
});
