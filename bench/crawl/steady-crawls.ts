/**
 * The crawls after the discovery, on the same crawler process, every server known: the master's source
 * crawled again (the listing steady crawl: list, then query what was listed) and then the built-in `index`
 * source (the index crawl: every known server re-queried without listing, the steady state of a default
 * deployment since QUERY_FROM_INDEX=1). Each is started by a start-crawl job, as the API's triggerCrawl starts
 * one, and measured like the discovery (crawl-window.ts); each starts when the previous crawl's finish job is
 * done, so that crawl's shared-names rule and roll-up are not counted in it: they are measured apart
 * (close-work.ts).
 */
import type { Client } from "pg";
import {
  JOB,
  schedulerIdOf,
  type CrawlQueues,
  type StartCrawlData,
} from "../../src/crawler/queues";
import { INDEX_SOURCE_NAME } from "../../src/crawler/sources/index-source";
import { seconds } from "../lib/report";
import { triggerSourceCrawl, waitForFinishJob } from "../lib/source-crawl";
import { measureCloseWork, type CloseWork } from "./close-work";
import {
  CrawlMeters,
  untilCrawlCloses,
  windowOf,
  type CrawlRow,
  type CrawlWindow,
} from "./crawl-window";

export interface SteadyCrawls {
  /** The master's source crawled again: listed, then every server it lists queried. */
  steady: CrawlWindow | null;
  /** The `index` source crawled: every known server queried, nothing listed. */
  index: CrawlWindow | null;
  /** What each one's close did after its row closed (close-work.ts); null when it did not close. */
  steadyClose: CloseWork | null;
  indexClose: CloseWork | null;
  /**
   * Index crawls opened before the measured one, by the scheduler (none once deferIndexTick has run): how
   * many, and the servers they queried; null when one of them was still open after the deadline.
   */
  indexBefore: { crawls: number; queried: number } | null;
  /** Whose player names each crawl changed (namesChangedSince); null when that crawl was not measured. */
  steadyNames: NamesChanged | null;
  indexNames: NamesChanged | null;
}

/**
 * The servers whose player names a crawl changed, of those with names before or after it. Each one that
 * gained a player writes a row of the names that arrived into game_server_player_search and its trigram index:
 * work a fleet whose players never leave would keep out of the crawl.
 */
export interface NamesChanged {
  changed: number;
  withNames: number;
}

export interface SteadyContext {
  c: Client;
  queues: CrawlQueues;
  /** The bench's master source. */
  sourceName: string;
  crawlerPid: number;
  simPids: number[];
  checkCrawler: () => void;
  crawlDeadlineMs: number;
  finishJobDeadlineMs: number;
  log: (line: string) => void;
}

/**
 * BullMQ runs a job scheduler's first `every` job at once, so the crawler's scheduler would open an index crawl
 * as it starts, beside the discovery: in a trial run (2,000 servers) it planned the 1,566 servers the master's
 * first listings had already written and queried them during the discovery, whose figures it then shared.
 * So the index source and its job scheduler are made before the crawler starts, as upsertIndexSource and
 * syncSchedulers make them, but with the first tick one interval later: the scheduler finds its job as it would
 * make it and leaves it (ensureScheduler), and with an interval of an hour no tick falls in the run.
 * crawlSteady counts the index crawls that opened all the same.
 */
export async function deferIndexTick(
  c: Client,
  queues: Pick<CrawlQueues, "crawl">,
  intervalMs: number,
): Promise<void> {
  const source = (
    await c.query<{ id: number }>(
      `INSERT INTO master_source (name, kind, host, interval_ms, enabled, updated_at)
       VALUES ($1, 'INDEX', '', $2, true, now()) RETURNING id`,
      [INDEX_SOURCE_NAME, intervalMs],
    )
  ).rows[0];
  if (!source) throw new Error("the index source was not created");
  await queues.crawl.upsertJobScheduler(
    schedulerIdOf(INDEX_SOURCE_NAME),
    { every: intervalMs, startDate: Date.now() + intervalMs },
    { name: JOB.startCrawl, data: { sourceId: source.id } satisfies StartCrawlData },
  );
}

/** No crawl after the discovery measured (none asked for, or the one before did not close). */
export const NO_LATER_CRAWLS: SteadyCrawls = {
  steady: null,
  index: null,
  steadyClose: null,
  indexClose: null,
  indexBefore: null,
  steadyNames: null,
  indexNames: null,
};

/** The listing steady crawl, then the index crawl, after the discovery crawl `discovery` closed. */
export async function crawlSteady(ctx: SteadyContext, discovery: CrawlRow): Promise<SteadyCrawls> {
  const indexBefore = await untilIndexCrawlsDone(ctx);
  ctx.log("steady crawl (every server known, listed then queried) on the same crawler");
  const steady = await crawlAgain(ctx, ctx.sourceName, discovery.id, "steady");
  if (!steady.row?.finished_at) return { ...NO_LATER_CRAWLS, steady: steady.window, indexBefore };
  const steadyClose = await closeWorkOf(ctx, steady.row, "steady");
  const steadyNames = await namesChangedSince(ctx.c);
  ctx.log("index crawl (every known server queried, nothing listed) on the same crawler");
  const index = await crawlAgain(ctx, INDEX_SOURCE_NAME, steady.row.id, "index");
  const indexClose = index.row?.finished_at ? await closeWorkOf(ctx, index.row, "index") : null;
  const indexNames = indexClose ? await namesChangedSince(ctx.c) : null;
  return {
    steady: steady.window,
    index: index.window,
    steadyClose,
    indexClose,
    indexBefore,
    steadyNames,
    indexNames,
  };
}

/** Every server's player names as they are, in this connection, before a crawl (outside its window). */
async function snapshotNames(c: Client): Promise<void> {
  await c.query("DROP TABLE IF EXISTS bench_names_before");
  await c.query("CREATE TEMP TABLE bench_names_before AS SELECT id, player_names FROM game_server");
}

/** Counted after the crawl's close is measured (the close writes no player names), so it is in neither. */
async function namesChangedSince(c: Client): Promise<NamesChanged> {
  const row = (
    await c.query<{ changed: string; with_names: string }>(
      `SELECT count(*) FILTER (WHERE g.player_names IS DISTINCT FROM b.player_names)::text AS changed,
              count(*) FILTER (WHERE g.player_names <> '' OR b.player_names <> '')::text AS with_names
       FROM game_server g LEFT JOIN bench_names_before b USING (id)`,
    )
  ).rows[0];
  return { changed: Number(row?.changed ?? 0), withNames: Number(row?.with_names ?? 0) };
}

/** The close's work after crawl `row`, which the next crawl waits for. */
function closeWorkOf(ctx: SteadyContext, row: CrawlRow, what: string): Promise<CloseWork> {
  return measureCloseWork(
    ctx.queues,
    row.key,
    ctx.crawlerPid,
    ctx.simPids,
    ctx.finishJobDeadlineMs,
    what,
    ctx.log,
  );
}

/**
 * The index crawls opened so far (none, unless deferIndexTick no longer defers the scheduler's first tick),
 * each waited for to close and its finish job done: a crawl of the index source triggered while one was open
 * would be skipped (one crawl per source at a time), and their work would fall in the steady windows.
 */
async function untilIndexCrawlsDone(ctx: SteadyContext): Promise<SteadyCrawls["indexBefore"]> {
  const before = { crawls: 0, queried: 0 };
  for (let afterId = "0"; ;) {
    const row = (
      await ctx.c.query<CrawlRow>(
        `SELECT c.id::text, c.key, c.started_at, c.finished_at, c.listed, c.queried, c.answered, c.failed, c.written
         FROM crawl c JOIN master_source s ON s.id = c.source_id WHERE c.id > $1 AND s.name = $2 ORDER BY c.id LIMIT 1`,
        [afterId, INDEX_SOURCE_NAME],
      )
    ).rows[0];
    if (!row) break;
    const closed = row.finished_at
      ? row
      : await untilCrawlCloses(
          ctx.c,
          afterId,
          INDEX_SOURCE_NAME,
          performance.now(),
          ctx.finishJobDeadlineMs,
          ctx.checkCrawler,
          (line) => ctx.log(`an index crawl the scheduler opened: ${line}`),
        );
    if (!closed?.finished_at) return null;
    await untilFinishJobDone(ctx, closed, "scheduler's index");
    before.crawls += 1;
    before.queried += closed.queried;
    afterId = closed.id;
  }
  if (before.crawls > 0)
    ctx.log(
      `the scheduler opened ${before.crawls} index crawl(s) itself before the steady crawl, ${before.queried} servers queried`,
    );
  return before;
}

async function untilFinishJobDone(ctx: SteadyContext, row: CrawlRow, what: string): Promise<void> {
  if (!(await waitForFinishJob(ctx.queues, row.key, ctx.finishJobDeadlineMs)))
    ctx.log(
      `the ${what} crawl's finish job was not done after ${seconds(ctx.finishJobDeadlineMs, 0)}`,
    );
}

/** A crawl of `sourceName` started on the running crawler, measured like the discovery crawl `afterId`. */
async function crawlAgain(
  ctx: SteadyContext,
  sourceName: string,
  afterId: string,
  label: string,
): Promise<{ window: CrawlWindow; row: CrawlRow | undefined }> {
  await snapshotNames(ctx.c);
  const meters = new CrawlMeters(ctx.simPids, ctx.crawlerPid);
  const started = performance.now();
  await triggerSourceCrawl(ctx.queues, (sql, params) => ctx.c.query(sql, params), sourceName);
  const row = await untilCrawlCloses(
    ctx.c,
    afterId,
    sourceName,
    started,
    ctx.crawlDeadlineMs,
    () => {
      ctx.checkCrawler();
      meters.sample();
    },
    (line) => ctx.log(`${label}: ${line}`),
  );
  return { window: windowOf(row, performance.now() - started, meters.read(ctx.crawlerPid)), row };
}
