/**
 * BullMQ plumbing: queue names, job names and deterministic job ids, and the JobSink that hands crawl
 * steps on through Redis. The graphql layer may import this module (only this one) to enqueue work,
 * e.g. triggerCrawl.
 *
 * Queues: `crawl` (start-crawl, list-run, finish-crawl, apply-retention) and `server-query`
 * (query-batch), so long query work never starves listings. Job ids are `<job>-<stable key>` with no
 * ':' in them; adding a job whose id exists is a no-op, and the database guards every step anyway.
 */
import { Queue, type JobsOptions } from 'bullmq';
import IORedis from 'ioredis';
import { connectionLogger, onBullError, watchRedis } from '../shared/redis-health';
import type { Db } from '../shared/db';
import type { FinishCrawlJob, JobSink, ListRunJob, QueryBatchJob } from './crawl-jobs';
import { cancelOpenCrawls } from './store/crawl-store';

export const CRAWL_QUEUE = 'crawl';
export const QUERY_QUEUE = 'server-query';

export const JOB = {
  startCrawl: 'start-crawl',
  listRun: 'list-run',
  queryBatch: 'query-batch',
  requeryServer: 'requery-server',
  finishCrawl: 'finish-crawl',
  applyRetention: 'apply-retention',
} as const;

export interface StartCrawlData {
  sourceId: number;
  /** Set for crawls triggered by hand (API, CLI); scheduled ones use the job's timestamp. */
  requestedAtMs?: number;
}

export const RETENTION_SCHEDULER_ID = 'retention';
/** `sweep-<source slug>`: names added through the API may hold characters job ids must not (':'). */
export const schedulerIdOf = (sourceName: string): string => `sweep-${sourceName.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 64)}`;

export interface QueueSettings {
  redisUrl: string;
  prefix: string;
  jobAttempts: number;
  jobBackoffMs: number;
}

/** One Redis connection as BullMQ wants it (its own per Queue / Worker); its errors go to the log (watchRedis). */
export function createRedis(url: string): IORedis {
  return watchRedis(new IORedis(url, { maxRetriesPerRequest: null, enableReadyCheck: true }), url);
}

export function defaultJobOptions(s: Pick<QueueSettings, 'jobAttempts' | 'jobBackoffMs'>): JobsOptions {
  return {
    attempts: s.jobAttempts,
    backoff: { type: 'exponential', delay: s.jobBackoffMs },
    removeOnComplete: { age: 3600, count: 20_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 20_000 },
  };
}

export interface CrawlQueues {
  crawl: Queue;
  query: Queue;
  close(): Promise<void>;
}

export function createCrawlQueues(s: QueueSettings): CrawlQueues {
  const crawlConnection = createRedis(s.redisUrl);
  const queryConnection = createRedis(s.redisUrl);
  const defaults = defaultJobOptions(s);
  const crawl = new Queue(CRAWL_QUEUE, { connection: crawlConnection, prefix: s.prefix, defaultJobOptions: defaults });
  const query = new Queue(QUERY_QUEUE, { connection: queryConnection, prefix: s.prefix, defaultJobOptions: defaults });
  for (const queue of [crawl, query]) queue.on('error', onBullError(connectionLogger(), `queue ${queue.name}`));
  return {
    crawl,
    query,
    async close() {
      await Promise.all([crawl.close(), query.close()]);
      await Promise.all([crawlConnection.quit().catch(() => undefined), queryConnection.quit().catch(() => undefined)]);
    },
  };
}

export function createQueueSink(queues: Pick<CrawlQueues, 'crawl' | 'query'>): JobSink {
  return {
    async listRuns(jobs: ListRunJob[]) {
      if (jobs.length === 0) return;
      await queues.crawl.addBulk(jobs.map((data) => ({ name: JOB.listRun, data, opts: { jobId: `list-${data.crawlKey}-${data.runId}` } })));
    },
    async queryBatches(jobs: QueryBatchJob[]) {
      if (jobs.length === 0) return;
      await queues.query.addBulk(jobs.map((data) => ({ name: JOB.queryBatch, data, opts: { jobId: `query-${data.crawlKey}-${data.batchKey}` } })));
    },
    async finishCrawl(data: FinishCrawlJob) {
      await queues.crawl.add(JOB.finishCrawl, data, { jobId: `finish-${data.crawlKey}` });
    },
  };
}

/** Starts a crawl of one source now (API triggerCrawl, CLI). Returns the job id. */
export async function enqueueCrawl(queues: Pick<CrawlQueues, 'crawl'>, sourceId: number, nowMs = Date.now()): Promise<string> {
  const jobId = `start-${sourceId}-${nowMs}`;
  await queues.crawl.add(JOB.startCrawl, { sourceId, requestedAtMs: nowMs } satisfies StartCrawlData, { jobId });
  return jobId;
}

/** Queries one game server now (API requeryServer). Returns the job id. */
export async function enqueueServerQuery(queues: Pick<CrawlQueues, 'query'>, serverId: number, nowMs = Date.now()): Promise<string> {
  const jobId = `requery-${serverId}-${nowMs}`;
  await queues.query.add(JOB.requeryServer, { serverId }, { jobId, attempts: 1 });
  return jobId;
}

export interface CancelledSource {
  id: number;
  name: string;
  /** Keys of the crawls cancelSourceCrawls closed. */
  crawlKeys: string[];
}

/**
 * A source disabled or about to be removed: its open crawls close as partial with `reason`, which stops
 * their running jobs within a second (they watch their crawl) and makes queued ones no-ops. Returns what
 * removeSourceJobs needs to clear the queues too.
 */
export async function cancelSourceCrawls(db: Db, source: { id: number; name: string }, reason: string): Promise<CancelledSource> {
  return { id: source.id, name: source.name, crawlKeys: await cancelOpenCrawls(db, source.id, reason) };
}

/** Removes the source's job scheduler and its queued jobs (start, list, query, finish); running ones stop on their own. */
export async function removeSourceJobs(queues: Pick<CrawlQueues, 'crawl' | 'query'>, source: CancelledSource): Promise<number> {
  await queues.crawl.removeJobScheduler(schedulerIdOf(source.name));
  const prefixes = source.crawlKeys.flatMap((k) => [`list-${k}-`, `query-${k}-`, `finish-${k}`]);
  let removed = 0;
  for (const queue of [queues.crawl, queues.query]) {
    for (const job of await queue.getJobs(['wait', 'delayed', 'prioritized'])) {
      const id = job.id ?? '';
      const ofSource = prefixes.some((p) => id.startsWith(p)) || (job.name === JOB.startCrawl && (job.data as Partial<StartCrawlData>).sourceId === source.id);
      if (!ofSource) continue;
      // A job that started meanwhile is locked and stays: it sees its crawl closed and stops.
      if (await job.remove().then(() => true, () => false)) removed++;
    }
  }
  return removed;
}
