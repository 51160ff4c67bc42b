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
