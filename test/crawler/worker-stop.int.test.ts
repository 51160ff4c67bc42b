/**
 * A job handed back at a graceful stop (worker-stop.ts) is waiting for the next worker at once: in the queue's
 * wait list with no lock left, not active under a lock that a restarted worker must wait out (lock duration
 * plus stalled checks, about a minute: issue 11's chaos run). Real Redis, a BullMQ worker of this process.
 */
import { randomBytes } from "node:crypto";
import type { Job } from "bullmq";
import pino from "pino";
import { openQueue, openWorker } from "../../src/crawler/queues";
import { JobsInFlight } from "../../src/crawler/worker-stop";
import { describeWithRedis } from "../helpers/queue-backend";
import { dropRedisPrefix } from "../helpers/redis";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(120_000);

// It reads the job's lock key in Redis: a test of the Redis backend.
describeWithRedis("graceful stop hands running jobs back", (redisUrl) => {
  const prefix = `gsindex-test-${randomBytes(4).toString("hex")}`;
  const store = { redisUrl };
  const opened = openQueue("handback", store, prefix, {});

  afterAll(async () => {
    await opened.queue.close();
    await opened.redis?.quit();
    await dropRedisPrefix(prefix);
  });

  it("leaves a job still running at the end of the grace period in wait, unlocked", async () => {
    const started: string[] = [];
    const inFlight = new JobsInFlight();
    const processor = inFlight.track(async (job: Job, _token?: string, signal?: AbortSignal) => {
      started.push(job.id ?? "");
      // Runs until aborted, like a listing longer than the grace period.
      await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve()));
      return null;
    });
    const w = openWorker("handback", processor, store, {
      prefix,
      concurrency: 2,
      stalledInterval: 30_000,
      lockDuration: 30_000,
    });
    await opened.queue.add("long", {}, { jobId: "long-1" });
    await waitFor("the job to start", () => started.includes("long-1"), { timeoutMs: 30_000 });
    await inFlight.stop(
      [{ worker: w.worker, connection: w.redis }],
      200,
      pino({ level: "silent" }),
    );
    await w.redis?.quit();
    const job = await opened.queue.getJob("long-1");
    const lock = await opened.redis!.get(`${prefix}:handback:long-1:lock`);
    expect(await job?.getState()).toBe("waiting");
    expect(lock).toBeNull();
    // No attempt spent, and not run again by the stopping worker, whose pending fetch the hand-back woke (it
    // took the job again: BullMQ counts that start, and the stop handed it back once more).
    expect(job?.attemptsMade).toBe(0);
    expect(started).toEqual(["long-1"]);
  });
});
