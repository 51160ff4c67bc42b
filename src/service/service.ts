/**
 * The gsindex service, assembled: the roles of one process (API, crawl scheduler, crawl workers,
 * management server) on one database and one set of queues, started in that order and stopped in
 * reverse. `gsindex serve` and `gsindex demo` both run it.
 */
import { createCrawlQueues, type CrawlQueues, type QueueStore } from "../crawler/queues";
import { migrate } from "../migrate";
import type { Config, ServeRole } from "../shared/config";
import { createDb } from "../shared/db";
import type { Logger } from "../shared/logger";
import { Metrics } from "../shared/metrics";
import { resolveQueueBackend } from "../shared/services";
import { startApiRole } from "./api-role";
import { startManagementRole } from "./management-role";
import type { RoleContext, StartedRole } from "./role";
import { startSchedulerRole } from "./scheduler-role";
import { stopService } from "./stop-service";
import { applyMemorySettings } from "./v8-memory";
import { startWorkerRole } from "./worker-role";

/** A started service: `apiUrl` is where the API listens (the bound port, so API_PORT=0 works), when it does. */
export interface RunningService {
  apiUrl: string | null;
  stop(): Promise<void>;
}

export async function startService(
  config: Readonly<Config>,
  roles: readonly ServeRole[],
  logger: Logger,
): Promise<RunningService> {
  applyMemorySettings(config, logger);
  if (config.migrateOnStart)
    await migrate(config.databaseUrl, { log: (line) => logger.info(line) });
  const db = createDb(config.databaseUrl);
  const needQueues = roles.some((r) => r === "scheduler" || r === "worker" || r === "api");
  const queueStore: QueueStore =
    (await resolveQueueBackend(config.queueBackend, config.redisUrl, false)) === "postgres"
      ? { backend: "postgres", databaseUrl: config.databaseUrl }
      : { redisUrl: config.redisUrl };
  if (needQueues) logger.info({ queueBackend: queueStore.backend ?? "redis" }, "queues");
  const queues: CrawlQueues | null = needQueues
    ? createCrawlQueues({
        ...queueStore,
        prefix: config.queuePrefix,
        jobAttempts: config.jobAttempts,
        jobBackoffMs: config.jobBackoffMs,
      })
    : null;
  const context: RoleContext = { config, db, metrics: new Metrics(), queues, queueStore, logger };
  const started: StartedRole[] = [];
  let apiUrl: string | null = null;

  try {
    if (roles.includes("management")) started.push(await startManagementRole(context));
    if (roles.includes("scheduler") && queues)
      started.push(await startSchedulerRole(context, queues));
    if (roles.includes("worker") && queues) started.push(startWorkerRole(context, queues));
    if (roles.includes("api")) {
      const api = await startApiRole(context);
      started.push(api);
      apiUrl = api.url;
    }
  } catch (err) {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    await queues?.close();
    await db.$disconnect();
    throw err;
  }

  return {
    apiUrl,
    stop: () => stopService({ started, queues, db, graceMs: config.stopGraceMs, logger }),
  };
}
