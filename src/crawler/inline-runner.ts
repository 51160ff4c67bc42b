/**
 * Runs crawl steps in this process, without Redis: the JobSink of `gsindex crawl --once`. Same steps
 * and same database guards as under BullMQ; duplicate job ids are dropped, failed steps are retried
 * with backoff, and run() resolves once nothing is left (or rejects after `attempts` failures).
 */
import type { FinishCrawlJob, JobSink, ListRunJob, QueryBatchJob } from "./crawl-jobs";

type Task = { id: string; attempt: number; run: () => Promise<void> };

export interface InlineHandlers {
  listRun(job: ListRunJob): Promise<void>;
  queryBatch(job: QueryBatchJob): Promise<void>;
  finishCrawl(job: FinishCrawlJob): Promise<void>;
}

export class InlineRunner implements JobSink {
  private readonly queue: Task[] = [];
  private readonly seen = new Set<string>();
  private active = 0;
  private idle: (() => void) | null = null;
  private failure: ((err: unknown) => void) | null = null;
  private handlers: InlineHandlers | null = null;

  constructor(
    private readonly options: { concurrency: number; attempts: number; backoffMs: number },
  ) {}

  /** The handlers need this runner as their sink, so they are attached after construction. */
  attach(handlers: InlineHandlers): void {
    this.handlers = handlers;
  }

  listRuns(jobs: ListRunJob[]): Promise<void> {
    for (const job of jobs)
      this.push(`list-${job.crawlKey}-${job.runId}`, () => this.require().listRun(job));
    return Promise.resolve();
  }

  queryBatches(jobs: QueryBatchJob[]): Promise<void> {
    for (const job of jobs)
      this.push(`query-${job.crawlKey}-${job.batchKey}`, () => this.require().queryBatch(job));
    return Promise.resolve();
  }

  finishCrawl(job: FinishCrawlJob): Promise<void> {
    this.push(`finish-${job.crawlKey}`, () => this.require().finishCrawl(job));
    return Promise.resolve();
  }

  /** Resolves when every task (and every task they added) is done. */
  run(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.idle = resolve;
      this.failure = reject;
      this.pump();
    });
  }

  private require(): InlineHandlers {
    if (!this.handlers) throw new Error("InlineRunner used before attach()");
    return this.handlers;
  }

  private push(id: string, run: () => Promise<void>): void {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.queue.push({ id, attempt: 1, run });
    this.pump();
  }

  private pump(): void {
    if (this.idle === null) return;
    while (this.active < this.options.concurrency && this.queue.length > 0) {
      const task = this.queue.shift() as Task;
      this.active++;
      task.run().then(
        () => this.settle(),
        (err: unknown) => {
          if (task.attempt >= this.options.attempts) {
            const fail = this.failure;
            this.idle = null;
            fail?.(err);
            return;
          }
          // Stays "active" while it waits, so the runner is not idle before the retry.
          setTimeout(
            () => {
              this.queue.unshift({ ...task, attempt: task.attempt + 1 });
              this.settle();
            },
            this.options.backoffMs * 2 ** (task.attempt - 1),
          );
        },
      );
    }
    if (this.active === 0 && this.queue.length === 0) {
      const done = this.idle;
      this.idle = null;
      done();
    }
  }

  private settle(): void {
    this.active--;
    this.pump();
  }
}
