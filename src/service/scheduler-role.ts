/** The scheduler role: the configured list sources written to the database, then one crawl tick per source. */
import type { CrawlQueues } from "../crawler/queues";
import { startScheduler, upsertConfiguredSources } from "../crawler/scheduler";
import type { RoleContext, StartedRole } from "./role";

export async function startSchedulerRole(
  { config, db, logger }: RoleContext,
  queues: CrawlQueues,
): Promise<StartedRole> {
  await upsertConfiguredSources(db, config.masterSources, config.crawlIntervalMs);
  const scheduler = await startScheduler(db, queues, logger.child({ role: "scheduler" }));
  return { name: "scheduler", stop: () => scheduler.stop() };
}
