/**
 * A query batch job sends its queries only once its querier has a slot free (Querier.whenFree,
 * limitInFlight): a worker may then run more batch jobs than fill QUERY_CONCURRENCY, and the jobs past
 * that wait holding their ids instead of queueing their queries behind the others'.
 */
import {
  crawlKeyOf,
  finishCrawl,
  listRun,
  queryBatch,
  startCrawl,
} from "../../src/crawler/crawl-jobs";
import { InlineRunner } from "../../src/crawler/inline-runner";
import type { Querier, QueryTarget } from "../../src/crawler/querier";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(60_000);

const SERVERS = 30;
const BATCH = 10;

describe("query batch jobs and the query slots", () => {
  let t: TestDatabase;

  beforeAll(async () => {
    t = await createTestDatabase("gsindex_slots");
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("waits for a free slot before sending a batch's queries, then sends all of them", async () => {
    const source = await t.db.masterSource.create({
      data: {
        name: "slots",
        kind: "ADDRESS_LIST",
        host: "list",
        options: {
          addresses: Array.from({ length: SERVERS }, (_v, i) => `127.0.0.9:${30000 + i}`),
        },
      },
    });
    const config = loadConfig({
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      QUERY_BATCH_SIZE: String(BATCH),
      LOG_LEVEL: "silent",
    });
    // The slots are the test's: every batch job that asks is held until the test lets it through.
    const held: Array<() => void> = [];
    const sent: QueryTarget[] = [];
    const querier: Querier = {
      query: (target) => {
        sent.push(target);
        return Promise.resolve({ kind: "failed", code: "TIMEOUT" });
      },
      whenFree: () => new Promise<void>((resolve) => held.push(resolve)),
    };
    const runner = new InlineRunner({ concurrency: 8, attempts: 1, backoffMs: 10 });
    const deps = {
      ...buildCrawlDeps({ config, db: t.db, logger: silentLogger, sink: runner }),
      querier,
    };
    runner.attach({
      listRun: (job) => listRun(deps, job),
      queryBatch: (job) => queryBatch(deps, job),
      finishCrawl: (job) => finishCrawl(deps, job),
    });
    const now = Date.now();
    const crawl = await startCrawl(deps, {
      sourceId: source.id,
      key: crawlKeyOf(source.name, now),
      startedAt: new Date(now),
    });
    expect(crawl).not.toBeNull();
    const done = runner.run();

    // All three batch jobs run (the runner has room for them) and wait for a slot: nothing is sent.
    await waitFor("three batch jobs waiting for a slot", () => held.length === SERVERS / BATCH, {
      timeoutMs: 30_000,
    });
    expect(sent).toHaveLength(0);

    // One slot frees up: one batch goes, with every one of its servers; the others still wait.
    held.shift()!();
    await waitFor("the first batch's queries", () => sent.length === BATCH, { timeoutMs: 30_000 });
    expect(held).toHaveLength(SERVERS / BATCH - 1);

    for (const go of held.splice(0)) go();
    await done;
    expect(new Set(sent.map((s) => s.queryPort)).size).toBe(SERVERS);
    const row = await t.db.crawl.findUniqueOrThrow({ where: { id: crawl!.id } });
    expect(row).toMatchObject({ queried: SERVERS, failed: SERVERS, timedOut: SERVERS });
    expect(row.finishedAt).not.toBeNull();
  });
});
