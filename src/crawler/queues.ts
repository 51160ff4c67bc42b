/**
 * BullMQ plumbing: queue names, job names and deterministic job ids, and the JobSink that hands crawl
 * steps on through the queue store. The graphql layer may import this module (only this one) to enqueue
 * work, e.g. triggerCrawl.
 *
 * The store is Redis or BullMQ's PostgreSQL backend (createPostgresBackend: the same Queue and Worker
 * API, jobs claimed with FOR UPDATE SKIP LOCKED, workers woken by LISTEN/NOTIFY), in a schema of its own
 * in gsindex's database. The README says which to run when; docs/BENCHMARKS.md measures both.
 *
 * Queues: `crawl` (start-crawl, list-run, finish-crawl, apply-retention) and `server-query`
 * (query-batch), so long query work never starves listings. Job ids are `<job>-<stable key>` with no
 * ':' in them; adding a job whose id exists is a no-op, and the database guards every step anyway.
 */
import {
  Queue,
  Worker,
  createPostgresBackend,
  type JobsOptions,
  type Processor,
  type WorkerOptions,
} from "bullmq";
import IORedis from "ioredis";
import { connectionLogger, onBullError, watchRedis } from "../shared/redis-health";
import type { Db } from "../shared/db";
import type { CatchUpJob, FinishCrawlJob, JobSink, ListRunJob, QueryBatchJob } from "./crawl-jobs";
import { cancelOpenCrawls } from "./store/crawl-store";

export const CRAWL_QUEUE = "crawl";
export const QUERY_QUEUE = "server-query";

export const JOB = {
  startCrawl: "start-crawl",
  listRun: "list-run",
  queryBatch: "query-batch",
  requeryServer: "requery-server",
  finishCrawl: "finish-crawl",
  applyRetention: "apply-retention",
} as const;

export interface StartCrawlData {
  sourceId: number;
  /** Set for crawls triggered by hand (API, CLI) and catch-ups; scheduled ones use the job's timestamp. */
  requestedAtMs?: number;
  /** A skipped tick made up at the close of the crawl it found running: like a tick, only for an enabled source. */
  catchUp?: boolean;
}

/** The held start of a source owed since a tick found this crawl running (JobSink.holdCatchUp). */
export const catchUpJobIdOf = (crawlKey: string): string => `catchup-${crawlKey}`;

export const RETENTION_SCHEDULER_ID = "retention";
/** `sweep-<source slug>`: names added through the API may hold characters job ids must not (':'). */
export const schedulerIdOf = (sourceName: string): string =>
  `sweep-${sourceName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .slice(0, 64)}`;

export type QueueBackend = "redis" | "postgres";

/** Where the queues live: a Redis, or the PostgreSQL of `databaseUrl` (schema queueSchemaOf(prefix)). */
export type QueueStore =
  { backend?: "redis"; redisUrl: string } | { backend: "postgres"; databaseUrl: string };

export type QueueSettings = QueueStore & {
  prefix: string;
  jobAttempts: number;
  jobBackoffMs: number;
};

export function backendOf(store: QueueStore): QueueBackend {
  return store.backend === "postgres" ? "postgres" : "redis";
}

/**
 * The PostgreSQL schema of one gsindex instance's queues: the prefix does on PostgreSQL what it does on
 * Redis (BullMQ's PostgreSQL backend ignores prefixes), so the demo, tests and benchmarks sharing a
 * database keep their queues apart. `gsindex` -> `gsindex_queue`.
 */
export function queueSchemaOf(prefix: string): string {
  return `${prefix}_queue`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
}

/** One Redis connection as BullMQ wants it (its own per Queue / Worker); its errors go to the log (watchRedis). */
export function createRedis(url: string): IORedis {
  return watchRedis(new IORedis(url, { maxRetriesPerRequest: null, enableReadyCheck: true }), url);
}

/**
 * BullMQ's options for one PostgreSQL-backed Queue or Worker: its own pool of `poolMax` connections
 * (plus one for LISTEN), and migrations of the queue schema on connect (idempotent; an advisory lock
 * lets many processes start at once).
 */
function postgresConnection(databaseUrl: string, prefix: string, poolMax: number) {
  return {
    connectionString: databaseUrl,
    schema: queueSchemaOf(prefix),
    migrate: true,
    max: poolMax,
  };
}

/** A Queue on either store; `redis` is its own connection on Redis (closed with it), absent on PostgreSQL. */
export function openQueue(
  name: string,
  store: QueueStore,
  prefix: string,
  defaultJobOptions: JobsOptions,
): { queue: Queue; redis?: IORedis } {
  if (store.backend === "postgres") {
    // The PostgreSQL backend types its Queue by its connection options; the API is the Redis one.
    const queue = new Queue(
      name,
      { connection: postgresConnection(store.databaseUrl, prefix, 4), defaultJobOptions },
      createPostgresBackend,
    ) as unknown as Queue;
    return { queue };
  }
  const redis = createRedis(store.redisUrl);
  return { queue: new Queue(name, { connection: redis, prefix, defaultJobOptions }), redis };
}

/** A Worker on either store; `redis` as for openQueue. */
export function openWorker(
  name: string,
  processor: Processor,
  store: QueueStore,
  options: Omit<WorkerOptions, "connection"> & { prefix: string; concurrency: number },
): { worker: Worker; redis?: IORedis } {
  if (store.backend === "postgres") {
    // A job holds a pool connection only while it is claimed, completed or its lock renewed, not while it runs.
    const connection = postgresConnection(
      store.databaseUrl,
      options.prefix,
      Math.min(10, options.concurrency + 2),
    );
    const worker = new Worker(
      name,
      processor,
      { ...options, connection },
      createPostgresBackend,
    ) as unknown as Worker;
    return { worker };
  }
  const redis = createRedis(store.redisUrl);
  return { worker: new Worker(name, processor, { ...options, connection: redis }), redis };
}

export function defaultJobOptions(
  s: Pick<QueueSettings, "jobAttempts" | "jobBackoffMs">,
): JobsOptions {
  return {
    attempts: s.jobAttempts,
    backoff: { type: "exponential", delay: s.jobBackoffMs },
    removeOnComplete: { age: 3600, count: 20_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 20_000 },
  };
}

export interface CrawlQueues {
  crawl: Queue;
  query: Queue;
  backend: QueueBackend;
  close(): Promise<void>;
}

export function createCrawlQueues(s: QueueSettings): CrawlQueues {
  const defaults = defaultJobOptions(s);
  const opened = [
    openQueue(CRAWL_QUEUE, s, s.prefix, defaults),
    openQueue(QUERY_QUEUE, s, s.prefix, defaults),
  ] as const;
  const [crawl, query] = [opened[0].queue, opened[1].queue];
  for (const queue of [crawl, query])
    queue.on("error", onBullError(connectionLogger(), `queue ${queue.name}`));
  return {
    crawl,
    query,
    backend: backendOf(s),
    async close() {
      await Promise.all([crawl.close(), query.close()]);
      await Promise.all(opened.map(({ redis }) => redis?.quit().catch(() => undefined)));
    },
  };
}

export function createQueueSink(queues: Pick<CrawlQueues, "crawl" | "query">): JobSink {
  return {
    async listRuns(jobs: ListRunJob[]) {
      if (jobs.length === 0) return;
      await queues.crawl.addBulk(
        jobs.map((data) => ({
          name: JOB.listRun,
          data,
          opts: { jobId: `list-${data.crawlKey}-${data.runId}` },
        })),
      );
    },
    async queryBatches(jobs: QueryBatchJob[]) {
      if (jobs.length === 0) return;
      await queues.query.addBulk(
        jobs.map((data) => ({
          name: JOB.queryBatch,
          data,
          opts: { jobId: `query-${data.crawlKey}-${data.batchKey}` },
        })),
      );
    },
    async finishCrawl(data: FinishCrawlJob) {
      await queues.crawl.add(JOB.finishCrawl, data, { jobId: `finish-${data.crawlKey}` });
    },
    // Delayed, not waiting on anything in the queue: the crawl's close promotes it (releaseCatchUp).
    async holdCatchUp(job: CatchUpJob) {
      await queues.crawl.add(
        JOB.startCrawl,
        {
          sourceId: job.sourceId,
          requestedAtMs: job.skippedAtMs,
          catchUp: true,
        } satisfies StartCrawlData,
        { jobId: catchUpJobIdOf(job.afterCrawlKey), delay: job.fallbackMs },
      );
    },
    async releaseCatchUp(afterCrawlKey: string) {
      const job = await queues.crawl.getJob(catchUpJobIdOf(afterCrawlKey));
      // Promoted by a concurrent release, or run already: nothing to do.
      if (job && (await job.isDelayed())) await job.promote().catch(() => undefined);
    },
  };
}

/** Starts a crawl of one source now (API triggerCrawl, CLI). Returns the job id. */
export async function enqueueCrawl(
  queues: Pick<CrawlQueues, "crawl">,
  sourceId: number,
  nowMs = Date.now(),
): Promise<string> {
  const jobId = `start-${sourceId}-${nowMs}`;
  await queues.crawl.add(
    JOB.startCrawl,
    { sourceId, requestedAtMs: nowMs } satisfies StartCrawlData,
    { jobId },
  );
  return jobId;
}

/** Queries one game server now (API requeryServer). Returns the job id. */
export async function enqueueServerQuery(
  queues: Pick<CrawlQueues, "query">,
  serverId: number,
  nowMs = Date.now(),
): Promise<string> {
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
export async function cancelSourceCrawls(
  db: Db,
  source: { id: number; name: string },
  reason: string,
): Promise<CancelledSource> {
  return {
    id: source.id,
    name: source.name,
    crawlKeys: await cancelOpenCrawls(db, source.id, reason),
  };
}

/** Removes the source's job scheduler and its queued jobs (start, list, query, finish); running ones stop on their own. */
export async function removeSourceJobs(
  queues: Pick<CrawlQueues, "crawl" | "query">,
  source: CancelledSource,
): Promise<number> {
  await queues.crawl.removeJobScheduler(schedulerIdOf(source.name));
  const prefixes = source.crawlKeys.flatMap((k) => [`list-${k}-`, `query-${k}-`, `finish-${k}`]);
  let removed = 0;
  for (const queue of [queues.crawl, queues.query]) {
    for (const job of await queue.getJobs(["wait", "delayed", "prioritized"])) {
      const id = job.id ?? "";
      const ofSource =
        prefixes.some((p) => id.startsWith(p)) ||
        (job.name === JOB.startCrawl &&
          (job.data as Partial<StartCrawlData>).sourceId === source.id);
      if (!ofSource) continue;
      // A job that started meanwhile is locked and stays: it sees its crawl closed and stops.
      if (
        await job.remove().then(
          () => true,
          () => false,
        )
      )
        removed++;
    }
  }
  return removed;
}
