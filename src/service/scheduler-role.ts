/** The scheduler role: the configured list sources (and the index source, QUERY_FROM_INDEX) written to the database, then one crawl tick per source. */
import type { CrawlQueues } from "../crawler/queues";
import { startScheduler, upsertConfiguredSources, upsertIndexSource } from "../crawler/scheduler";
import type { RoleContext, StartedRole } from "./role";

export async function startSchedulerRole(
  { config, db, logger }: RoleContext,
  queues: CrawlQueues,
): Promise<StartedRole> {
  await upsertConfiguredSources(db, config.masterSources, config.crawlIntervalMs);
  await upsertIndexSource(db, {
    enabled: config.queryFromIndex,
    intervalMs: config.queryIntervalMs,
  });
  const scheduler = await startScheduler(db, queues, logger.child({ role: "scheduler" }));
  return { name: "scheduler", stop: () => scheduler.stop() };
}
