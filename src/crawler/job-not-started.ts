/**
 * What a job throws when the worker's stop reaches it before it began its work (a query batch still
 * waiting for a query slot): the worker hands it back to its queue unstarted, with no attempt spent
 * (JobsInFlight in worker-stop.ts), instead of starting it inside the stop's grace period.
 */
export class JobNotStartedError extends Error {
  constructor(message = "the worker is stopping: handed back before it started") {
    super(message);
    this.name = "JobNotStartedError";
  }
}
