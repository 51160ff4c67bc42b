/**
 * Stopping BullMQ workers within a deadline. Worker.close() waits for every job in flight however long
 * it runs (a listing may take minutes), and a later close(true) only returns that same pending promise,
 * so STOP_GRACE_MS was never honoured. Here: take no new jobs, tell the running ones (`stopping`), give
 * them the grace period, then hand each one still running back to its queue's wait list (Job.moveToWait:
 * no attempt is spent, another worker takes it at once), abort its processor through its signal, and
 * close by force. A job that has not begun its work when told (a query batch waiting for a slot) throws
 * JobNotStartedError and goes back at once: the stop then waits only for work already under way, and
 * does not start more of it that the end of the grace would throw away.
 */
import { Job, WaitingError, type Worker } from "bullmq";
import type IORedis from "ioredis";
import type { Logger } from "../shared/logger";
import { JobNotStartedError } from "./job-not-started";

type Processor = (job: Job, token?: string, signal?: AbortSignal) => Promise<unknown>;

/** How long one Redis step of the hand-back may take before it is given up (Redis may be down). */
const STEP_TIMEOUT_MS = 1000;
/** Passes over the active list before closing, and the pause between them (a woken fetch lands within it). */
const MAX_SWEEPS = 5;
const SWEEP_PAUSE_MS = 200;

function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms))),
  ]).finally(() => clearTimeout(timer));
}

export class JobsInFlight {
  private readonly running = new Map<string, { job: Job; token: string | undefined }>();
  private readonly handedBack = new Set<string>();
  private readonly stopController = new AbortController();
  /** Aborted when stop() begins: a job that has not started its work yet should throw JobNotStartedError. */
  readonly stopBegun: AbortSignal = this.stopController.signal;

  /** The processor, with its job tracked while it runs; a handed-back job ends as a WaitingError, so BullMQ leaves it in the queue. */
  track(processor: Processor): Processor {
    return async (job, token, signal) => {
      const key = `${job.queueName}:${job.id ?? ""}`;
      if (this.stopBegun.aborted) {
        // Fetched while the stop began: straight back to the queue, unstarted.
        await this.handBackUnstarted(key, job, token);
        throw new WaitingError();
      }
      this.running.set(key, { job, token });
      try {
        const result = await processor(job, token, signal);
        if (this.handedBack.has(key)) throw new WaitingError();
        return result;
      } catch (err) {
        if (err instanceof JobNotStartedError && !this.handedBack.has(key))
          await this.handBackUnstarted(key, job, token);
        if (this.handedBack.has(key)) throw new WaitingError();
        throw err;
      } finally {
        this.running.delete(key);
      }
    };
  }

  /** Back to the queue's wait list, no attempt spent; a Redis that cannot take it leaves it to the stalled check. */
  private async handBackUnstarted(key: string, job: Job, token: string | undefined): Promise<void> {
    this.handedBack.add(key);
    await job.moveToWait(token).catch(() => undefined);
  }

  get size(): number {
    return this.running.size;
  }

  /** `connection` is the worker's own (non-blocking) Redis connection, still open until the caller closes it; absent on PostgreSQL. */
  async stop(
    workers: Array<{ worker: Worker; connection?: IORedis }>,
    graceMs: number,
    logger: Logger,
  ): Promise<void> {
    const deadline = Date.now() + graceMs;
    // No new jobs from here on; pause(true) does not wait for the running ones.
    await within(
      Promise.all(workers.map(({ worker }) => worker.pause(true).catch(() => undefined))),
      STEP_TIMEOUT_MS,
    );
    // From here every job a worker still fetches goes straight back (track()), and a job not started yet
    // comes back unstarted. After the pause, so that such a job is not fetched again by a worker still taking
    // jobs. A paused BullMQ worker's pending blocking fetch still moves a job to active when woken, and a
    // hand-back wakes it: the job just handed back came straight back to this worker, and when that landed
    // after close() had begun, it stayed active under a lock nobody renewed until the stalled check, about a
    // minute, freed it.
    this.stopController.abort();
    while (this.running.size > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, deadline - Date.now()))));
    if (this.running.size > 0) {
      const jobs = [...this.running.entries()];
      logger.warn(
        { graceMs, jobs: jobs.map(([key]) => key) },
        "jobs still running at stop: handing them back to the queue",
      );
      for (const [key] of jobs) this.handedBack.add(key);
      await within(
        Promise.all(
          jobs.map(([key, { job, token }]) =>
            job
              .moveToWait(token)
              .catch((err: unknown) =>
                logger.warn(
                  { job: key, err: err instanceof Error ? err.message : String(err) },
                  "could not hand a job back: it runs again once its lock expires",
                ),
              ),
          ),
        ),
        STEP_TIMEOUT_MS,
      );
      for (const { worker } of workers)
        worker.cancelAllJobs("gsindex is stopping: job handed back to the queue");
    }
    // After a hand-back, look again a moment later, until a look finds nothing: the fetch it woke may have
    // landed meanwhile (a job fetched while stopping that track() could not bounce before the close).
    let handedBack = this.handedBack.size > 0;
    for (let pass = 0; pass < MAX_SWEEPS; pass++) {
      if (pass > 0 || handedBack) await new Promise((r) => setTimeout(r, SWEEP_PAUSE_MS));
      const handed = await within(
        Promise.all(
          workers.map(({ worker, connection }) => this.handBackFetched(worker, connection, logger)),
        ),
        STEP_TIMEOUT_MS,
      );
      const none = handed !== undefined && handed.every((n) => n === 0);
      if (none && (pass > 0 || !handedBack)) break;
      handedBack ||= !none;
    }
    await within(
      Promise.all(workers.map(({ worker }) => worker.close(true).catch(() => undefined))),
      STEP_TIMEOUT_MS,
    );
  }

  /**
   * Jobs a worker fetched ahead (moved to active under one of its tokens) but never started: without
   * this they stay active until their lock expires and the stalled check finds them, a minute later.
   */
  private async handBackFetched(
    worker: Worker,
    connection: IORedis | undefined,
    logger: Logger,
  ): Promise<number> {
    let handed = 0;
    try {
      for (const { id, token } of await activeJobsOf(worker, connection)) {
        const key = `${worker.name}:${id}`;
        if (this.running.has(key)) continue;
        if (token === null || !token.startsWith(`${worker.id}:`)) continue;
        // Also a job handed back before and fetched again by this worker: its new token is in the lock.
        this.handedBack.add(key);
        const job = await Job.fromId(worker, id);
        await job?.moveToWait(token);
        handed++;
      }
    } catch (err) {
      logger.warn(
        { queue: worker.name, err: err instanceof Error ? err.message : String(err) },
        "could not hand fetched jobs back: they run again once their locks expire",
      );
    }
    return handed;
  }
}

/**
 * The queue's active jobs with their lock tokens: on Redis from the active list and the job's lock key,
 * on PostgreSQL from the job table of BullMQ's schema (the pool's search_path points at it).
 */
async function activeJobsOf(
  worker: Worker,
  connection: IORedis | undefined,
): Promise<Array<{ id: string; token: string | null }>> {
  if (connection !== undefined) {
    const activeKey = worker.keys.active;
    if (activeKey === undefined) return [];
    const ids = await connection.lrange(activeKey, 0, -1);
    return Promise.all(
      ids.map(async (id) => ({ id, token: await connection.get(`${worker.toKey(id)}:lock`) })),
    );
  }
  const pool = (
    worker.getBackend() as {
      connection?: {
        pool?: {
          query(
            text: string,
            params: unknown[],
          ): Promise<{ rows: Array<{ id: string; token: string | null }> }>;
        };
      };
    }
  ).connection?.pool;
  if (pool === undefined) return [];
  const { rows } = await pool.query(
    `select id, lock_token as token from job where queue = $1 and state = 'active'`,
    [worker.name],
  );
  return rows;
}
