/**
 * One crawl of one source in the foreground, without Redis: the crawl steps on the in-process runner,
 * with the crawl row polled for progress. Used by `gsindex crawl --once` and by tests.
 */
import type { Config } from "../shared/config";
import type { Db } from "../shared/db";
import type { Logger } from "../shared/logger";
import { crawlKeyOf, finishCrawl, listRun, queryBatch, startCrawl } from "./crawl-jobs";
import { InlineRunner } from "./inline-runner";
import type { ListSourceFactory } from "./list-source";
import type { Querier } from "./querier";
import { buildCrawlDeps } from "./runtime";

export interface CrawlProgress {
  crawlId: number;
  key: string;
  listed: number;
  queried: number;
  answered: number;
  failed: number;
  /** Of `failed`: no answer before the deadline. */
  timedOut: number;
  /** Listed servers the address policy kept from being queried in this crawl. */
  refused: number;
  written: number;
  partial: boolean;
  finished: boolean;
  elapsedMs: number;
  /**
   * Servers of this source the address policy keeps from being queried: counted for the totals only (null in
   * the progress reports, which come every half second, and the count reads the source's rows).
   */
  notQueryable: number | null;
}

export interface CrawlOnceOptions {
  config: Config;
  db: Db;
  logger: Logger;
  sourceId: number;
  querier?: Querier;
  listSources?: ListSourceFactory;
  onProgress?: (p: CrawlProgress) => void;
  progressIntervalMs?: number;
  now?: () => number;
}

async function readProgress(
  db: Db,
  crawlId: number,
  sourceId: number,
  startedMs: number,
  now: () => number,
  withNotQueryable: boolean,
): Promise<CrawlProgress> {
  const c = await db.crawl.findUniqueOrThrow({ where: { id: crawlId } });
  const notQueryable = withNotQueryable
    ? await db.gameServer.count({
        where: {
          sourceId,
          notQueryable: true,
          managementRegistered: false,
          lastListedAt: { gte: c.startedAt },
        },
      })
    : null;
  return {
    crawlId,
    key: c.key,
    listed: c.listed,
    queried: c.queried,
    answered: c.answered,
    failed: c.failed,
    timedOut: c.timedOut,
    refused: c.refused,
    written: c.written,
    partial: c.partial,
    finished: c.finishedAt !== null,
    elapsedMs: now() - startedMs,
    notQueryable,
  };
}

export async function runCrawlOnce(o: CrawlOnceOptions): Promise<CrawlProgress> {
  const now = o.now ?? Date.now;
  const source = await o.db.masterSource.findUniqueOrThrow({ where: { id: o.sourceId } });
  const runner = new InlineRunner({
    concurrency: o.config.workerConcurrency + 2,
    attempts: o.config.jobAttempts,
    backoffMs: Math.min(o.config.jobBackoffMs, 2000),
  });
  const deps = buildCrawlDeps({
    // A one-off crawl queries what it lists (QUERY_FROM_INDEX off): no index crawl follows it to query the
    // servers it already knew. The index source itself still queries every known server.
    config: { ...o.config, queryFromIndex: false },
    db: o.db,
    logger: o.logger,
    sink: runner,
    ...(o.querier ? { querier: o.querier } : {}),
    ...(o.listSources ? { listSources: o.listSources } : {}),
  });
  runner.attach({
    listRun: (job) => listRun(deps, job),
    queryBatch: (job) => queryBatch(deps, job),
    finishCrawl: (job) => finishCrawl(deps, job),
  });
  const startedMs = now();
  const crawl = await startCrawl(deps, {
    sourceId: source.id,
    key: crawlKeyOf(source.name, startedMs),
    startedAt: new Date(startedMs),
  });
  if (!crawl) throw new Error(`source ${source.id} disappeared`);
  let timer: NodeJS.Timeout | undefined;
  // One report at a time (a tick that finds one still on its way is skipped), and the one on its way when the
  // crawl ends is awaited, so that none comes after the totals.
  let inFlight: Promise<void> | null = null;
  if (o.onProgress) {
    const report = o.onProgress;
    timer = setInterval(() => {
      if (inFlight) return;
      inFlight = readProgress(o.db, crawl.id, source.id, startedMs, now, false)
        .then(report, () => undefined)
        .finally(() => {
          inFlight = null;
        });
    }, o.progressIntervalMs ?? 500);
  }
  try {
    await runner.run();
  } finally {
    clearInterval(timer);
    await inFlight;
  }
  const totals = await readProgress(o.db, crawl.id, source.id, startedMs, now, true);
  o.onProgress?.(totals);
  return totals;
}
