/** The worker role: the crawl's jobs (listings, query batches, retention), with outcomes counted in the metrics. */
import { countOutcomes } from "../crawler/counting-querier";
import { createPostgresPacer, createRedisPacer } from "../crawler/master-pace";
import { createQueueSink, createRedis, queueSchemaOf, type CrawlQueues } from "../crawler/queues";
import { closeRedis } from "../shared/redis-health";
import { buildCrawlDeps, createDefaultQuerier } from "../crawler/runtime";
import { startWorkers } from "../crawler/workers";
import { crawlMetricsRecorder } from "./crawl-metrics";
import type { RoleContext, StartedRole } from "./role";

export function startWorkerRole(
  { config, db, metrics, queueStore, logger }: RoleContext,
  queues: CrawlQueues,
): StartedRole {
  const workerLogger = logger.child({ role: "worker" });
  const paceError = (err: unknown) =>
    workerLogger.warn(
      { err: err instanceof Error ? err.message : String(err) },
      "master pace not shared: this request paced by this process alone",
    );
  // Every worker process paces a master's listings together, where the queues live.
  const paceRedis = queueStore.backend === "postgres" ? null : createRedis(queueStore.redisUrl);
  const masterPacer = paceRedis
    ? createRedisPacer(paceRedis, `${config.queuePrefix}:master-pace:`, paceError)
    : createPostgresPacer(db, queueSchemaOf(config.queuePrefix), paceError);
  const deps = buildCrawlDeps({
    config,
    db,
    logger: workerLogger,
    sink: createQueueSink(queues),
    querier: countOutcomes(createDefaultQuerier(config), metrics.queryOutcomes),
    onEvent: crawlMetricsRecorder(db, metrics),
    masterPacer,
  });
  const workers = startWorkers(
    deps,
    {
      ...queueStore,
      prefix: config.queuePrefix,
      concurrency: config.workerConcurrency,
      stalledIntervalMs: config.workerStalledIntervalMs,
      lockDurationMs: config.workerLockDurationMs,
      historyRawDays: config.historyRawDays,
      historyRollupDays: config.historyRollupDays,
      graceMs: config.stopGraceMs,
      outageWaitMs: config.jobOutageWaitMs,
    },
    workerLogger,
  );
  logger.info({ concurrency: config.workerConcurrency }, "workers started");
  return {
    name: "worker",
    async stop() {
      await workers.stop();
      if (paceRedis) await closeRedis(paceRedis);
    },
  };
}
