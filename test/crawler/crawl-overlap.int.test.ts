/**
 * One source, at most one crawl running (issue 11 item 2): a source on a 1 s interval whose listing takes
 * 3 s, scheduled by the real scheduler (re-synced every 2.5 s, as an operator's API changes would) and
 * crawled by BullMQ workers against real PostgreSQL, the queues on Redis (or, without one, on PostgreSQL:
 * test/helpers/queue-backend.ts), for ~20 s. Crawls of the source never
 * overlap in time, and every tick that found one running is skipped and counted.
 */
import { Writable } from "node:stream";
import pino from "pino";
import type { CrawlEvent } from "../../src/crawler/crawl-jobs";
import { createQueueSink, type CrawlQueues } from "../../src/crawler/queues";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import { startScheduler, syncSchedulers, type RunningScheduler } from "../../src/crawler/scheduler";
import { createListSourceFactory } from "../../src/crawler/sources";
import { scheduledSlotMs, startWorkers, type RunningWorkers } from "../../src/crawler/workers";
import { type Config } from "../../src/shared/config";
import { type RunningFleet } from "../../src/simulator/fleet";
import { testWorkerSettings } from "../helpers/workers";
import { type TestDatabase } from "../helpers/db";
import { testQueueStore } from "../helpers/queue-backend";
import { startCrawlFixture, type CrawlFixture } from "../helpers/crawl-fixture";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(180_000);

const LIST_DELAY_MS = 3000;
const RUN_MS = 20_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("one crawl per source at a time", () => {
  let f: CrawlFixture;
  let t: TestDatabase;
  let fleet: RunningFleet;
  let config: Config;
  let queues: CrawlQueues;
  let workers: RunningWorkers | null = null;
  let scheduler: RunningScheduler | null = null;
  const logLines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    f = await startCrawlFixture({ servers: 20, seed: 7 });
    ({ t, fleet, config, queues } = f);
  });

  afterAll(async () => {
    await scheduler?.stop();
    await workers?.stop();
    await f?.close();
  });

  it("never overlaps crawls of a slow source, and counts the ticks it skips", async () => {
    const source = await t.db.masterSource.create({
      data: {
        name: "slow-list",
        kind: "ADDRESS_LIST",
        host: "list",
        intervalMs: 1000,
        options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
      },
    });
    const real = createListSourceFactory(config);
    const events: CrawlEvent[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString("utf8").split("\n"))
          if (line.trim() !== "") logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: "info" }, sink);
    const deps = buildCrawlDeps({
      config,
      db: t.db,
      logger,
      sink: createQueueSink(queues),
      // The real address list, made slow: each listing takes 3 s, three of the source's intervals.
      listSources: (s) => {
        const inner = real(s);
        return {
          splits: () => inner.splits(),
          list: async (split, signal, resume) => (
            await sleep(LIST_DELAY_MS),
            inner.list(split, signal, resume)
          ),
        };
      },
      onEvent: (e) => events.push(e),
    });
    workers = startWorkers(
      deps,
      testWorkerSettings(testQueueStore(t.url), config.queuePrefix),
      logger,
    );
    scheduler = await startScheduler(t.db, queues, logger, 2500);
    await sleep(RUN_MS);
    await scheduler.stop();
    scheduler = null;
    // No more ticks (the job scheduler lives in Redis, not in the stopped re-sync timer).
    await queues.crawl.removeJobScheduler("sweep-slow-list");
    // Let the crawl in progress finish (bounded), then stop the ticks that are still queued. Not finishing in
    // time is allowed here: the checks below accept a last crawl still running on a loaded machine.
    await waitFor(
      "the crawl in progress to finish",
      async () =>
        (await t.db.crawl.count({ where: { sourceId: source.id, finishedAt: null } })) === 0,
      { timeoutMs: 90_000 },
    ).catch(() => undefined);
    await workers.stop();
    workers = null;

    const crawls = await t.db.crawl.findMany({
      where: { sourceId: source.id },
      orderBy: { startedAt: "asc" },
    });
    expect(crawls.length).toBeGreaterThanOrEqual(3);
    // On a loaded machine the last crawl may still be running; every other one is closed.
    for (const c of crawls.slice(0, -1)) expect(c.finishedAt).not.toBeNull();
    for (let i = 1; i < crawls.length; i++) {
      const previous = crawls[i - 1]!;
      // The next crawl opens only after the previous one closed.
      expect(crawls[i]!.startedAt.getTime()).toBeGreaterThanOrEqual(previous.finishedAt!.getTime());
    }
    // Each finished crawl listed the whole fleet once (an overlapping crawl made `listed` wrong).
    for (const c of crawls.filter((c) => c.finishedAt !== null))
      expect(c.listed).toBe(fleet.specs.length);

    const skipped = events.filter((e) => e.type === "skipped");
    // ~20 ticks in 20 s, at most ~7 crawls of 3 s: the rest were skipped, each counted and logged.
    expect(skipped.length).toBeGreaterThanOrEqual(5);
    expect(
      logLines.filter(
        (l) => l.msg === "crawl tick skipped: the previous crawl of the source is still running",
      ).length,
    ).toBe(skipped.length);
  });

  it("re-syncs schedulers without re-creating their pending ticks, and keys a crawl by its tick", async () => {
    const source = await t.db.masterSource.create({
      data: {
        name: "resync",
        kind: "ADDRESS_LIST",
        host: "list",
        intervalMs: 60_000,
        options: { addresses: [] },
      },
    });
    expect((await syncSchedulers(t.db, queues)).upserted).toContain("sweep-resync");
    const pending = async () =>
      (await queues.crawl.getJobs(["delayed", "wait"]))
        .filter((j) => j.id?.startsWith("repeat:sweep-resync:"))
        .map((j) => `${j.id}@${j.timestamp}`);
    const before = await pending();
    expect(before).toHaveLength(1);
    // Upserting an unchanged scheduler re-created this job (new timestamp, back of the queue): now left alone.
    expect((await syncSchedulers(t.db, queues)).upserted).not.toContain("sweep-resync");
    expect(await pending()).toEqual(before);
    await t.db.masterSource.update({ where: { id: source.id }, data: { intervalMs: 30_000 } });
    expect((await syncSchedulers(t.db, queues)).upserted).toContain("sweep-resync");
    await t.db.masterSource.update({ where: { id: source.id }, data: { enabled: false } });
    expect((await syncSchedulers(t.db, queues)).removed).toContain("sweep-resync");

    expect(scheduledSlotMs({ id: "repeat:sweep-resync:1795492948719", timestamp: 1 })).toBe(
      1795492948719,
    );
    expect(scheduledSlotMs({ id: "start-3-1795492948000", timestamp: 5 })).toBe(5);
  });
});
