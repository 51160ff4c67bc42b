/**
 * A worker's graceful stop (worker-stop.ts) waits only for work already under way: the query batch jobs
 * still waiting for a query slot when it begins go back to their queue at once, unstarted and with no
 * attempt spent, while the batch holding the slots finishes and is written. Before, the waiting jobs took
 * the slots as they freed up, held the stop for its whole grace period, and whatever they had started by
 * its end was thrown away.
 */
import { createQueueSink, enqueueCrawl } from "../../src/crawler/queues";
import type { Querier } from "../../src/crawler/querier";
import { buildCrawlDeps, createDefaultQuerier } from "../../src/crawler/runtime";
import { startWorkers, type RunningWorkers } from "../../src/crawler/workers";
import { silentLogger } from "../../src/shared/logger";
import { startCrawlFixture, type CrawlFixture } from "../helpers/crawl-fixture";
import { testQueueStore } from "../helpers/queue-backend";
import { waitFor } from "../helpers/wait-for";
import { testWorkerSettings } from "../helpers/workers";

jest.setTimeout(120_000);

const SERVERS = 40;
const BATCH = 10;

describe("stopping a worker while query batches wait for a slot", () => {
  let f: CrawlFixture;
  let workers: RunningWorkers | null = null;
  let openGate: () => void = () => undefined;

  beforeAll(async () => {
    f = await startCrawlFixture({
      servers: SERVERS,
      seed: 5,
      // 40 simulated servers on 127.0.0.1: more ports on one IP than the farm rule allows.
      // The process's query slots (QUERY_CONCURRENCY) fit one batch.
      env: {
        QUERY_BATCH_SIZE: String(BATCH),
        QUERY_CONCURRENCY: String(BATCH),
        FARM_RULE_EXEMPT_RANGES: "127.0.0.1",
      },
      jobAttempts: 3,
      jobBackoffMs: 200,
    });
  });

  afterAll(async () => {
    openGate();
    await workers?.stop();
    await f?.close();
  });

  it("hands the waiting batches back at once and finishes the one querying", async () => {
    const real = createDefaultQuerier(f.config);
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const sent: number[] = [];
    // The queries of the first batch hold every slot until the test opens the gate.
    const gated: Querier = {
      query: async (target, signal) => {
        sent.push(target.serverId);
        await gate;
        return real.query(target, signal);
      },
    };
    workers = startWorkers(
      buildCrawlDeps({
        config: f.config,
        db: f.t.db,
        logger: silentLogger,
        sink: createQueueSink(f.queues),
        querier: gated,
      }),
      // A grace far longer than the test waits: the stop must not need it.
      testWorkerSettings(testQueueStore(f.t.url), f.config.queuePrefix, {
        concurrency: SERVERS / BATCH,
        graceMs: 600_000,
      }),
      silentLogger,
    );
    const source = await f.t.db.masterSource.create({
      data: {
        name: "stopping",
        kind: "ADDRESS_LIST",
        host: "list",
        options: { addresses: f.addresses() },
      },
    });
    await enqueueCrawl(f.queues, source.id);

    await waitFor("one batch's queries holding every slot", () => sent.length === BATCH, {
      timeoutMs: 60_000,
    });
    await waitFor(
      "every batch job running, the others waiting for a slot",
      async () => (await f.queues.query.getJobs(["active"])).length === SERVERS / BATCH,
      { timeoutMs: 60_000 },
    );

    let lastCounts = "";
    const stopped = workers.stop();
    // The slots are still held: only jobs that did not wait for them can be back in the queue by now.
    const handedBack = await waitFor(
      "the waiting batches back in the queue",
      async () => {
        lastCounts = JSON.stringify(await f.queues.query.getJobCounts());
        const jobs = await f.queues.query.getJobs(["wait"]);
        return jobs.length === SERVERS / BATCH - 1 ? jobs : null;
      },
      { timeoutMs: 60_000, describe: () => lastCounts },
    );
    expect(handedBack.map((j) => j.attemptsMade)).toEqual([0, 0, 0]);

    openGate();
    await stopped;
    workers = null;
    // Nothing of the handed-back batches was sent; the batch that was querying is written.
    expect(sent).toHaveLength(BATCH);
    const crawl = await f.t.db.crawl.findFirstOrThrow({ where: { sourceId: source.id } });
    expect(crawl.queried).toBe(BATCH);
    expect(crawl.finishedAt).toBeNull();
    expect(await f.queues.query.getJobs(["wait"])).toHaveLength(SERVERS / BATCH - 1);
  });
});
