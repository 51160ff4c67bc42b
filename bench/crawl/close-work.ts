/**
 * What a crawl's close still does once its row is closed: the finish job's shared-names rule and the roll-up of
 * the crawl's hours into server_day and population_rollup (src/crawler/crawl-jobs.ts, finishCrawl). The crawl
 * windows (crawl-window.ts) end when the row closes, so this work is in none of them; it is measured on its
 * own, from then to the finish job done, with the same meters, so the report can add it to the crawl it follows.
 */
import type { CrawlQueues } from "../../src/crawler/queues";
import { seconds } from "../lib/report";
import { waitForFinishJob } from "../lib/source-crawl";
import { CrawlMeters } from "./crawl-window";

export interface CloseWork {
  /** The finish job completed (or failed for good) before the deadline. */
  done: boolean;
  wallMs: number;
  crawlerCpuMs: number;
  /** Every postgres process of the machine, as in the crawl windows. */
  postgresCpuMs: number;
}

/** Postgres backends that exit meanwhile still count up to their last look. */
const SAMPLE_MS = 250;

/**
 * Waits for crawl `crawlKey`'s finish job, metering the crawler and PostgreSQL meanwhile; says so through `log`
 * when it is not done by the deadline (`what`: which crawl, for that line).
 */
export async function measureCloseWork(
  queues: Pick<CrawlQueues, "crawl">,
  crawlKey: string,
  crawlerPid: number,
  simPids: number[],
  deadlineMs: number,
  what: string,
  log: (line: string) => void,
): Promise<CloseWork> {
  const meters = new CrawlMeters(simPids, crawlerPid);
  const started = performance.now();
  const timer = setInterval(() => meters.sample(), SAMPLE_MS);
  let done: boolean;
  try {
    done = await waitForFinishJob(queues, crawlKey, deadlineMs);
  } finally {
    clearInterval(timer);
  }
  if (!done) log(`the ${what} crawl's finish job was not done after ${seconds(deadlineMs, 0)}`);
  const cpu = meters.read(crawlerPid);
  return {
    done,
    wallMs: performance.now() - started,
    crawlerCpuMs: cpu.crawlerCpuMs,
    postgresCpuMs: cpu.postgresCpuMs,
  };
}
