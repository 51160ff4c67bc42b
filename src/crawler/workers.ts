/**
 * The worker role: BullMQ workers running the crawl steps. Each worker has its own Redis connection.
 * Stalled jobs (a worker killed mid-job) go back to the queue after `stalledIntervalMs` and run again;
 * the database guards make that safe. stop(): workers finish their jobs in flight (up to graceMs), then
 * are closed by force, which hands the rest back to the queue; then Redis connections are closed.
 */
import { Worker, type Job } from 'bullmq';
import type { Logger } from '../shared/logger';
import { crawlKeyOf, finishCrawl, listRun, queryBatch, requeryServer, startCrawl, type CrawlDeps, type FinishCrawlJob, type ListRunJob, type QueryBatchJob, type RequeryServerJob } from './crawl-jobs';
import { CRAWL_QUEUE, JOB, QUERY_QUEUE, createRedis, type StartCrawlData } from './queues';
import { loadSource } from './store/crawl-store';
import { applyRetention } from './store/history-store';

export interface WorkerSettings {
  redisUrl: string;
  prefix: string;
  /** Query batches processed at once by this process. */
  concurrency: number;
  stalledIntervalMs: number;
  lockDurationMs: number;
  historyRawDays: number;
  historyRollupDays: number;
  /** How long stop() waits for jobs in flight before handing them back. */
  graceMs: number;
}

export interface RunningWorkers {
  stop(): Promise<void>;
}

/**
 * The tick a job scheduler's job stands for (its id is `repeat:<scheduler>:<slot ms>`). Not job.timestamp:
 * that is when the job was created, and BullMQ creates a tick's job again when its scheduler is upserted,
 * which gave one tick two crawl keys.
 */
export function scheduledSlotMs(job: Pick<Job, 'id' | 'timestamp'>): number {
  const slot = /^repeat:.+:(\d+)$/.exec(job.id ?? '')?.[1];
  return slot === undefined ? job.timestamp : Number(slot);
}

export function startWorkers(deps: CrawlDeps, s: WorkerSettings, logger: Logger): RunningWorkers {
  const crawlConnection = createRedis(s.redisUrl);
  const queryConnection = createRedis(s.redisUrl);
  const common = { prefix: s.prefix, stalledInterval: s.stalledIntervalMs, lockDuration: s.lockDurationMs, maxStalledCount: 5 };

  const crawlWorker = new Worker(
    CRAWL_QUEUE,
    async (job: Job, _token?: string, signal?: AbortSignal) => {
      switch (job.name) {
        case JOB.startCrawl: {
          const data = job.data as StartCrawlData;
          const source = await loadSource(deps.db, data.sourceId);
          if (!source || (!source.enabled && data.requestedAtMs === undefined)) return null;
          const scheduledAtMs = data.requestedAtMs ?? scheduledSlotMs(job);
          // Keyed by its tick, timed from when it really starts (a tick may wait in the queue).
          const crawl = await startCrawl(deps, { sourceId: source.id, key: crawlKeyOf(source.name, scheduledAtMs), startedAt: new Date() });
          return crawl?.id ?? null;
        }
        case JOB.listRun:
          await listRun(deps, job.data as ListRunJob, signal);
          return null;
        case JOB.finishCrawl:
          await finishCrawl(deps, job.data as FinishCrawlJob);
          return null;
        case JOB.applyRetention:
          return applyRetention(deps.db, { rawDays: s.historyRawDays, rollupDays: s.historyRollupDays });
        default:
          logger.warn({ job: job.name }, 'unknown job on the crawl queue: ignored');
          return null;
      }
    },
    { ...common, connection: crawlConnection, concurrency: 4 },
  );
  const queryWorker = new Worker(
    QUERY_QUEUE,
    async (job: Job, _token?: string, signal?: AbortSignal) => {
      if (job.name === JOB.requeryServer) await requeryServer(deps, job.data as RequeryServerJob, signal);
      else await queryBatch(deps, job.data as QueryBatchJob, signal);
      return null;
    },
    { ...common, connection: queryConnection, concurrency: s.concurrency },
  );
  for (const w of [crawlWorker, queryWorker]) {
    w.on('failed', (job, err) => logger.warn({ job: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed'));
    w.on('error', (err) => logger.error({ err: err.message }, 'worker error'));
  }

  return {
    async stop() {
      const graceful = Promise.all([crawlWorker.close(), queryWorker.close()]);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        graceful.then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), s.graceMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        logger.warn({ graceMs: s.graceMs }, 'jobs still running at stop: handing them back to the queue');
        await Promise.all([crawlWorker.close(true), queryWorker.close(true)]);
      }
      await Promise.all([crawlConnection.quit().catch(() => undefined), queryConnection.quit().catch(() => undefined)]);
    },
  };
}
