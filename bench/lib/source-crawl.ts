/**
 * Another crawl of a configured source while its crawler keeps running, started as the API's triggerCrawl
 * starts one (a start-crawl job on the crawl queue). With every server already known, it is the steady
 * crawl a running index repeats, where the scheduler's first crawl of a fresh database is discovery.
 */
import type { QueryResult, QueryResultRow } from "pg";
import { enqueueCrawl, type CrawlQueues } from "../../src/crawler/queues";

/** A pg query function: a client's, or a wrapper that counts the bench's own queries. */
export type Query = <R extends QueryResultRow>(
  sql: string,
  params?: unknown[],
) => Promise<QueryResult<R>>;

export async function triggerSourceCrawl(
  queues: Pick<CrawlQueues, "crawl">,
  query: Query,
  sourceName: string,
): Promise<void> {
  // The scheduler writes its configured sources to master_source when it starts.
  const source = (
    await query<{ id: number }>("SELECT id FROM master_source WHERE name = $1", [sourceName])
  ).rows[0];
  if (!source) throw new Error(`the scheduler did not create the source ${sourceName}`);
  await enqueueCrawl(queues, source.id);
}

const FINISH_POLL_MS = 250;

/**
 * Waits for a closed crawl's finish-crawl job to be done: after the close it runs the shared-names rule and
 * the roll-up, work that belongs to that crawl and would otherwise be counted in the next one. False when
 * the job is not done within `timeoutMs`.
 */
export async function waitForFinishJob(
  queues: Pick<CrawlQueues, "crawl">,
  crawlKey: string,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  // The job id createQueueSink gives a crawl's finish-crawl job.
  const jobId = `finish-${crawlKey}`;
  while (performance.now() < deadline) {
    const state = await queues.crawl.getJobState(jobId);
    if (state === "completed" || state === "failed") return true;
    await new Promise((r) => setTimeout(r, FINISH_POLL_MS));
  }
  return false;
}
