/**
 * The worker role: BullMQ workers running the crawl steps, on Redis or PostgreSQL (queues.ts). Each
 * worker has its own connection (a Redis one, or a small pool).
 * Stalled jobs (a worker killed mid-job) go back to the queue after `stalledIntervalMs` and run again;
 * the database guards make that safe. stop(): workers finish their jobs in flight (up to graceMs), then
 * hand the rest back to the queue and close by force (worker-stop.ts); then the Redis connections are closed.
 */
import { DelayedError, type Job } from "bullmq";
import type { Logger } from "../shared/logger";
import { closeRedis, onBullError } from "../shared/redis-health";
import {
  crawlKeyOf,
  finishCrawl,
  listRun,
  queryBatch,
  requeryServer,
  startCrawl,
  type CrawlDeps,
  type FinishCrawlJob,
  type ListRunJob,
  type QueryBatchJob,
  type RequeryServerJob,
} from "./crawl-jobs";
import {
  CRAWL_QUEUE,
  JOB,
  QUERY_QUEUE,
  openWorker,
  type QueueStore,
  type StartCrawlData,
} from "./queues";
import { isDependencyDown } from "./dependency-errors";
import { closeCrawlAsFailed, loadSource } from "./store/crawl-store";
import { applyRetention } from "./store/history-store";
import { JobsInFlight } from "./worker-stop";

export type WorkerSettings = QueueStore & {
  prefix: string;
  /** Query batches processed at once by this process. */
  concurrency: number;
  stalledIntervalMs: number;
  lockDurationMs: number;
  historyRawDays: number;
  historyRollupDays: number;
  /** How long stop() waits for jobs in flight before handing them back. */
  graceMs: number;
  /**
   * How long a job that finds PostgreSQL or Redis unreachable waits for it (moved to delayed, no attempt
   * spent) before it fails as usual. @defaultValue 15 minutes
   */
  outageWaitMs?: number;
  /** How often such a job tries again. @defaultValue 5 s */
  outageRetryMs?: number;
};

export interface RunningWorkers {
  stop(): Promise<void>;
}

/**
 * The tick a job scheduler's job stands for (its id is `repeat:<scheduler>:<slot ms>`). Not job.timestamp:
 * that is when the job was created, and BullMQ creates a tick's job again when its scheduler is upserted,
 * which gave one tick two crawl keys.
 */
export function scheduledSlotMs(job: Pick<Job, "id" | "timestamp">): number {
  const slot = /^repeat:.+:(\d+)$/.exec(job.id ?? "")?.[1];
  return slot === undefined ? job.timestamp : Number(slot);
}

/** The crawl a job belongs to, for logs and for closing it when the job gives up. */
function crawlOf(job: Job | undefined): { crawlId?: number; crawlKey?: string } {
  const data = (job?.data ?? {}) as { crawlId?: unknown; crawlKey?: unknown };
  return {
    ...(typeof data.crawlId === "number" ? { crawlId: data.crawlId } : {}),
    ...(typeof data.crawlKey === "string" ? { crawlKey: data.crawlKey } : {}),
  };
}

/**
 * Dependency outages (PostgreSQL or Redis unreachable) are waited out, not failed: the job goes back to
 * delayed without spending an attempt (job.moveToDelayed skips the attempt count) and tries again every
 * `retryMs`, for up to `waitMs` since this process first saw the outage; after that it fails as usual.
 * Any job that gets through ends the outage.
 */
function outageGuard(logger: Logger, waitMs: number, retryMs: number) {
  let downSinceMs: number | null = null;
  return async <T>(job: Job, token: string | undefined, work: () => Promise<T>): Promise<T> => {
    try {
      const result = await work();
      if (downSinceMs !== null) {
        logger.info({ outageMs: Date.now() - downSinceMs }, "dependency back: jobs run again");
        downSinceMs = null;
      }
      return result;
    } catch (err) {
      if (!isDependencyDown(err) || token === undefined) throw err;
      const now = Date.now();
      if (downSinceMs === null) {
        downSinceMs = now;
        logger.warn(
          { err: err instanceof Error ? err.message : String(err), waitMs },
          "dependency unreachable: jobs wait for it without spending attempts",
        );
      }
      if (now - downSinceMs > waitMs) throw err;
      await job.moveToDelayed(now + retryMs, token);
      throw new DelayedError();
    }
  };
}

export function startWorkers(deps: CrawlDeps, s: WorkerSettings, logger: Logger): RunningWorkers {
  const common = {
    prefix: s.prefix,
    stalledInterval: s.stalledIntervalMs,
    lockDuration: s.lockDurationMs,
    maxStalledCount: 5,
  };
  const guard = outageGuard(logger, s.outageWaitMs ?? 15 * 60_000, s.outageRetryMs ?? 5000);

  const inFlight = new JobsInFlight();
  const crawl = openWorker(
    CRAWL_QUEUE,
    inFlight.track((job: Job, token?: string, signal?: AbortSignal) =>
      guard(job, token, async () => {
        switch (job.name) {
          case JOB.startCrawl: {
            const data = job.data as StartCrawlData;
            const source = await loadSource(deps.db, data.sourceId);
            // A crawl asked for by hand runs even for a disabled source; a tick or a catch-up does not.
            const byHand = data.requestedAtMs !== undefined && data.catchUp !== true;
            if (!source || (!source.enabled && !byHand)) return null;
            const scheduledAtMs = data.requestedAtMs ?? scheduledSlotMs(job);
            // Keyed by its tick, timed from when it really starts (a tick may wait in the queue).
            const crawl = await startCrawl(deps, {
              sourceId: source.id,
              key: crawlKeyOf(source.name, scheduledAtMs),
              startedAt: new Date(),
            });
            return crawl?.id ?? null;
          }
          case JOB.listRun:
            await listRun(deps, job.data as ListRunJob, signal);
            return null;
          case JOB.finishCrawl:
            await finishCrawl(deps, job.data as FinishCrawlJob);
            return null;
          case JOB.applyRetention:
            return applyRetention(deps.db, {
              rawDays: s.historyRawDays,
              rollupDays: s.historyRollupDays,
            });
          default:
            logger.warn({ job: job.name }, "unknown job on the crawl queue: ignored");
            return null;
        }
      }),
    ),
    s,
    { ...common, concurrency: 4 },
  );
  const query = openWorker(
    QUERY_QUEUE,
    inFlight.track((job: Job, token?: string, signal?: AbortSignal) =>
      guard(job, token, async () => {
        if (job.name === JOB.requeryServer)
          await requeryServer(deps, job.data as RequeryServerJob, signal);
        else await queryBatch(deps, job.data as QueryBatchJob, signal, inFlight.stopBegun);
        return null;
      }),
    ),
    s,
    { ...common, concurrency: s.concurrency },
  );
  for (const w of [crawl.worker, query.worker]) {
    w.on("failed", (job, err) => {
      const crawl = crawlOf(job);
      const final = job === undefined || job.attemptsMade >= (job.opts.attempts ?? 1);
      if (!final) {
        logger.warn(
          { job: job.id, attempts: job.attemptsMade, ...crawl, err: err.message },
          "job failed: retried",
        );
        return;
      }
      logger.error(
        { job: job?.id, attempts: job?.attemptsMade, ...crawl, err: err.message },
        "job failed for good",
      );
      // Its crawl cannot complete any more: closed as partial, saying why (what it wrote stays).
      if (crawl.crawlId !== undefined && job?.name !== JOB.requeryServer) {
        closeCrawlAsFailed(
          deps.db,
          crawl.crawlId,
          `${job?.name ?? "a job"} failed for good: ${err.message}`,
        )
          .then(
            (closed) =>
              closed &&
              logger.error(
                { ...crawl },
                "crawl closed as partial: one of its jobs failed for good",
              ),
          )
          .catch((e: unknown) =>
            logger.error(
              { ...crawl, err: e instanceof Error ? e.message : String(e) },
              "could not close the crawl; it is closed as abandoned later",
            ),
          );
      }
    });
    w.on("error", onBullError(logger, "worker"));
  }

  return {
    async stop() {
      await inFlight.stop(
        [
          { worker: crawl.worker, connection: crawl.redis },
          { worker: query.worker, connection: query.redis },
        ],
        s.graceMs,
        logger,
      );
      await Promise.all([crawl, query].map(({ redis }) => (redis ? closeRedis(redis) : undefined)));
    },
  };
}
