/** The worker role: the crawl's jobs (listings, query batches, retention), with outcomes counted in the metrics. */
import { countOutcomes } from "../crawler/counting-querier";
import { createQueueSink, type CrawlQueues } from "../crawler/queues";
import { buildCrawlDeps, createDefaultQuerier } from "../crawler/runtime";
import { startWorkers } from "../crawler/workers";
import { crawlMetricsRecorder } from "./crawl-metrics";
import type { RoleContext, StartedRole } from "./role";

export function startWorkerRole(
  { config, db, metrics, queueStore, logger }: RoleContext,
  queues: CrawlQueues,
): StartedRole {
  const workerLogger = logger.child({ role: "worker" });
  const deps = buildCrawlDeps({
    config,
    db,
    logger: workerLogger,
    sink: createQueueSink(queues),
    querier: countOutcomes(createDefaultQuerier(config), metrics.queryOutcomes),
    onEvent: crawlMetricsRecorder(db, metrics),
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
  return { name: "worker", stop: () => workers.stop() };
}
