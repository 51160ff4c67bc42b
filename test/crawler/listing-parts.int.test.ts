/**
 * A listing written while it goes on (src/crawler/listing-parts.ts): a source that pages (a Valve master)
 * hands its servers over as it finds them, and every 2,000 of them are written and their batches queued
 * before the listing ends. What a listing holds is then bounded by that, not by its split.
 */
import {
  crawlKeyOf,
  listRun,
  startCrawl,
  type CrawlDeps,
  type JobSink,
  type ListRunJob,
  type QueryBatchJob,
} from "../../src/crawler/crawl-jobs";
import type { ListSource, ListedServer } from "../../src/crawler/list-source";
import { ListingClosedError } from "../../src/crawler/listing-parts";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

jest.setTimeout(120_000);

const SERVERS = 4500;
const PAGE = 500;
const BATCH = 250;

const serverAt = (i: number): ListedServer => ({
  host: `127.0.${Math.floor(i / 200)}.${(i % 200) + 1}`,
  queryPort: 27015,
});

/** A source of SERVERS servers in pages of PAGE; `onPageDone` runs after each page is handed over. */
function pagedSource(
  onPageDone: (pagesDone: number) => Promise<void> = async () => {},
): ListSource {
  return {
    splits: () => [{ region: -1, split: "" }],
    async list(_split, _signal, _cursor, onPage) {
      const servers = Array.from({ length: SERVERS }, (_v, i) => serverAt(i));
      if (!onPage) return { servers, partial: false };
      for (let from = 0; from < SERVERS; from += PAGE) {
        await onPage(servers.slice(from, from + PAGE));
        await onPageDone(from / PAGE + 1);
      }
      return { servers: [], partial: false };
    },
  };
}

describe("a listing written while it goes on", () => {
  let t: TestDatabase;
  let sourceSeq = 0;

  beforeAll(async () => {
    t = await createTestDatabase("gsindex_listing_parts");
  });
  afterAll(async () => {
    await t?.drop();
  });

  async function setUp(source: ListSource, sink: Partial<JobSink> = {}) {
    const row = await t.db.masterSource.create({
      data: { name: `paged-${++sourceSeq}`, kind: "VALVE_UDP", host: "127.0.0.1", regions: [255] },
    });
    const runs: ListRunJob[] = [];
    const queued: QueryBatchJob[] = [];
    const jobs: JobSink = {
      listRuns: async (j) => {
        runs.push(...j);
      },
      queryBatches: async (j) => {
        queued.push(...j);
      },
      finishCrawl: async () => {},
      ...sink,
    };
    const config = loadConfig({
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      QUERY_BATCH_SIZE: String(BATCH),
      LOG_LEVEL: "silent",
    });
    const deps: CrawlDeps = {
      ...buildCrawlDeps({ config, db: t.db, logger: silentLogger, sink: jobs }),
      listSources: () => source,
    };
    const now = Date.now();
    const crawl = await startCrawl(deps, {
      sourceId: row.id,
      key: crawlKeyOf(row.name, now),
      startedAt: new Date(now),
    });
    expect(runs).toHaveLength(1);
    return { deps, crawl: crawl!, job: runs[0]!, queued };
  }

  async function batchesOf(crawlId: number) {
    return t.db.crawlBatch.findMany({ where: { crawlId }, orderBy: { batchKey: "asc" } });
  }

  it("writes every 2,000 servers and queues their batches before the listing ends", async () => {
    const seen: {
      pages: number;
      servers: number;
      batches: number;
      queued: number;
      runDone: boolean;
      listedAt: Date | null;
    }[] = [];
    const ref: { state?: Awaited<ReturnType<typeof setUp>> } = {};
    const source = pagedSource(async (pages) => {
      const crawlId = ref.state!.crawl.id;
      const [run] = await t.db.crawlRun.findMany({ where: { crawlId } });
      seen.push({
        pages,
        servers: await t.db.gameServer.count({ where: { sourceId: ref.state!.crawl.sourceId } }),
        batches: await t.db.crawlBatch.count({ where: { crawlId } }),
        queued: ref.state!.queued.length,
        runDone: run!.finishedAt !== null,
        listedAt: (await t.db.crawl.findUniqueOrThrow({ where: { id: crawlId } })).listedAt,
      });
    });
    const state = (ref.state = await setUp(source));
    await listRun(state.deps, state.job);

    // Written at 2,000 and 4,000 servers handed over (pages 4 and 8), the last 500 at the end.
    expect(seen.map((s) => s.servers)).toEqual([0, 0, 0, 2000, 2000, 2000, 2000, 4000, 4000]);
    expect(seen.map((s) => s.batches)).toEqual([0, 0, 0, 8, 8, 8, 8, 16, 16]);
    expect(seen.map((s) => s.queued)).toEqual([0, 0, 0, 8, 8, 8, 8, 16, 16]);
    expect(seen.every((s) => !s.runDone)).toBe(true);
    // The API's listing time (crawl.listedAt) is the listing's end, not its last part.
    expect(seen.every((s) => s.listedAt === null)).toBe(true);

    const batches = await batchesOf(state.crawl.id);
    const ids = batches.flatMap((b) => b.serverIds.map(Number));
    expect(new Set(ids).size).toBe(SERVERS);
    expect(ids).toHaveLength(SERVERS);
    expect(state.queued.map((q) => q.batchKey).sort()).toEqual(batches.map((b) => b.batchKey));
    const [run] = await t.db.crawlRun.findMany({ where: { crawlId: state.crawl.id } });
    expect(run).toMatchObject({ found: SERVERS, partial: false });
    expect(run!.finishedAt).not.toBeNull();
    const crawl = await t.db.crawl.findUniqueOrThrow({ where: { id: state.crawl.id } });
    expect(crawl.listed).toBe(SERVERS);
    expect(crawl.listedAt).not.toBeNull();
  });

  it("fails the job when a part's batches cannot be queued; its retry plans and counts no server twice", async () => {
    let queueDown = true;
    const state = await setUp(pagedSource(), {
      queryBatches: async (jobs) => {
        if (queueDown && jobs.length > 0) throw new Error("Redis is down");
        state.queued.push(...jobs);
      },
    });
    // Not recorded as a listing that stopped short: the job fails, to be retried.
    await expect(listRun(state.deps, state.job)).rejects.toThrow("Redis is down");
    const [failed] = await t.db.crawlRun.findMany({ where: { crawlId: state.crawl.id } });
    expect(failed!.finishedAt).toBeNull();
    expect((await batchesOf(state.crawl.id)).length).toBe(8);

    queueDown = false;
    await listRun(state.deps, state.job);
    const batches = await batchesOf(state.crawl.id);
    const ids = batches.flatMap((b) => b.serverIds.map(Number));
    expect(ids).toHaveLength(SERVERS);
    expect(new Set(ids).size).toBe(SERVERS);
    // The first attempt's batches, never queued, are queued by the retry with its own.
    expect(state.queued.map((q) => q.batchKey).sort()).toEqual(batches.map((b) => b.batchKey));
    const [run] = await t.db.crawlRun.findMany({ where: { crawlId: state.crawl.id } });
    expect(run).toMatchObject({ found: SERVERS, partial: false });
    const crawl = await t.db.crawl.findUniqueOrThrow({ where: { id: state.crawl.id } });
    expect(crawl.listed).toBe(SERVERS);
  });

  it("stops listing when another attempt recorded the run meanwhile, and hands on that run's batches", async () => {
    let refused: unknown;
    const ref: { state?: Awaited<ReturnType<typeof setUp>> } = {};
    const source: ListSource = {
      splits: () => [{ region: -1, split: "" }],
      async list(_split, _signal, _cursor, onPage) {
        const servers = Array.from({ length: SERVERS }, (_v, i) => serverAt(i));
        await onPage!(servers.slice(0, 2000));
        // Another attempt of the same job finished the run (a stalled job run twice).
        await t.db.crawlRun.updateMany({
          where: { crawlId: ref.state!.crawl.id },
          data: { finishedAt: new Date(), found: 2000 },
        });
        try {
          await onPage!(servers.slice(2000, 4000));
        } catch (err) {
          refused = err;
          throw err;
        }
        return { servers: [], partial: false };
      },
    };
    const state = (ref.state = await setUp(source));
    await listRun(state.deps, state.job);
    expect(refused).toBeInstanceOf(ListingClosedError);
    const batches = await batchesOf(state.crawl.id);
    expect(batches.flatMap((b) => b.serverIds)).toHaveLength(2000);
    expect(new Set(state.queued.map((q) => q.batchKey))).toEqual(
      new Set(batches.map((b) => b.batchKey)),
    );
    const [run] = await t.db.crawlRun.findMany({ where: { crawlId: state.crawl.id } });
    expect(run!.found).toBe(2000);
  });
});
