/**
 * The service's stop, bounded: within STOP_GRACE_MS (plus a little for the hand-back) the API drains its
 * requests while the workers finish or hand back their jobs; each later step is bounded, as Redis or
 * PostgreSQL may be the reason for the stop and not answer at all.
 */
import type { CrawlQueues } from "../crawler/queues";
import type { Db } from "../shared/db";
import type { Logger } from "../shared/logger";
import type { StartedRole } from "./role";

/** How long one stop step after the grace period may take (closing queues, the database pool). */
const STOP_STEP_MS = 500;

export interface StopPlan {
  started: readonly StartedRole[];
  queues: CrawlQueues | null;
  db: Db;
  graceMs: number;
  logger: Logger;
}

export async function stopService({
  started,
  queues,
  db,
  graceMs,
  logger,
}: StopPlan): Promise<void> {
  const byName = new Map(started.map((s) => [s.name, s]));
  const stopRole = async (s: StartedRole | undefined, boundMs: number): Promise<void> => {
    if (!s) return;
    const outcome = await within(
      s.stop().then(
        () => "stopped",
        (err: unknown) => err,
      ),
      boundMs,
    );
    if (outcome === undefined)
      logger.warn({ role: s.name, boundMs }, "stop took too long: left behind");
    else if (outcome !== "stopped")
      logger.error(
        { role: s.name, err: outcome instanceof Error ? outcome.message : String(outcome) },
        "stop failed",
      );
  };
  await Promise.all([
    stopRole(byName.get("api"), graceMs),
    stopRole(byName.get("worker"), graceMs + STOP_STEP_MS * 2),
  ]);
  for (const name of ["scheduler", "management"] as const)
    await stopRole(byName.get(name), STOP_STEP_MS);
  await within(queues?.close() ?? Promise.resolve(), STOP_STEP_MS);
  await within(db.$disconnect(), STOP_STEP_MS);
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms))),
  ]).finally(() => clearTimeout(timer));
}
