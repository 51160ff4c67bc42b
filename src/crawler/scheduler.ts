/**
 * The scheduler role: master sources from the configuration are upserted into master_source (by name;
 * sources added through the API live only there), and one BullMQ job scheduler per enabled source
 * (`sweep-<name>`, every intervalMs) starts its crawls; schedulers of removed or disabled sources go.
 * A retention scheduler runs apply-retention hourly. Re-synced periodically so API changes apply.
 */
import type { Prisma } from "../generated/prisma/client";
import type { MasterSourceConfig } from "../shared/config";
import type { Db } from "../shared/db";
import type { Logger } from "../shared/logger";
import { INDEX_SOURCE_NAME } from "./sources/index-source";
import {
  JOB,
  RETENTION_SCHEDULER_ID,
  schedulerIdOf,
  type CrawlQueues,
  type StartCrawlData,
} from "./queues";

const RETENTION_EVERY_MS = 3600_000;

export async function upsertConfiguredSources(
  db: Db,
  sources: readonly MasterSourceConfig[],
  defaultIntervalMs: number,
): Promise<void> {
  for (const s of sources) {
    const data = {
      kind: s.kind,
      host: s.host,
      port: s.port ?? null,
      filter: s.filter,
      regions: s.regions,
      intervalMs: s.intervalMs ?? defaultIntervalMs,
      enabled: s.enabled,
      options: s.options as Prisma.InputJsonValue,
    };
    await db.masterSource.upsert({
      where: { name: s.name },
      create: { name: s.name, ...data },
      update: data,
    });
  }
}

/**
 * The built-in index source (kind INDEX, sources/index-source.ts): with QUERY_FROM_INDEX it exists, enabled,
 * with QUERY_INTERVAL_MS as its interval, and its sweep queries every known server; without it, a row left
 * from an earlier run is disabled (so its scheduler goes) and the other sources query what they list.
 */
export async function upsertIndexSource(
  db: Db,
  input: { enabled: boolean; intervalMs: number },
): Promise<void> {
  const data = {
    kind: "INDEX" as const,
    host: "",
    port: null,
    filter: "",
    regions: [],
    intervalMs: input.intervalMs,
    enabled: input.enabled,
  };
  if (input.enabled)
    await db.masterSource.upsert({
      where: { name: INDEX_SOURCE_NAME },
      create: { name: INDEX_SOURCE_NAME, ...data },
      update: data,
    });
  else
    await db.masterSource.updateMany({
      where: { name: INDEX_SOURCE_NAME, kind: "INDEX" },
      data: { enabled: false },
    });
}

/**
 * Upserts a job scheduler only when it is missing or its interval or job differ: upserting an existing
 * scheduler makes BullMQ create its pending tick's job again (a new job, put back at the end of the
 * queue when it was waiting), which delayed that tick and ran it next to the following one.
 */
async function ensureScheduler(
  queue: CrawlQueues["crawl"],
  existing: ReadonlyMap<string, { every?: number; name: string; data?: unknown }>,
  id: string,
  every: number,
  job: { name: string; data: object },
): Promise<boolean> {
  const current = existing.get(id);
  if (
    current &&
    current.every === every &&
    current.name === job.name &&
    JSON.stringify(current.data ?? {}) === JSON.stringify(job.data)
  )
    return false;
  await queue.upsertJobScheduler(id, { every }, job);
  return true;
}

export async function syncSchedulers(
  db: Db,
  queues: Pick<CrawlQueues, "crawl">,
): Promise<{ active: string[]; removed: string[]; upserted: string[] }> {
  const sources = await db.masterSource.findMany({ where: { enabled: true } });
  const existing = new Map(
    (await queues.crawl.getJobSchedulers()).map((j) => [
      j.key,
      { every: j.every, name: j.name, data: j.template?.data as unknown },
    ]),
  );
  const active: string[] = [];
  const upserted: string[] = [];
  for (const s of sources) {
    const id = schedulerIdOf(s.name);
    if (
      await ensureScheduler(queues.crawl, existing, id, s.intervalMs, {
        name: JOB.startCrawl,
        data: { sourceId: s.id } satisfies StartCrawlData,
      })
    )
      upserted.push(id);
    active.push(id);
  }
  if (
    await ensureScheduler(queues.crawl, existing, RETENTION_SCHEDULER_ID, RETENTION_EVERY_MS, {
      name: JOB.applyRetention,
      data: {},
    })
  )
    upserted.push(RETENTION_SCHEDULER_ID);
  const removed: string[] = [];
  for (const id of existing.keys()) {
    if (id.startsWith("sweep-") && !active.includes(id)) {
      await queues.crawl.removeJobScheduler(id);
      removed.push(id);
    }
  }
  return { active, removed, upserted };
}

export interface RunningScheduler {
  stop(): Promise<void>;
}

export async function startScheduler(
  db: Db,
  queues: Pick<CrawlQueues, "crawl">,
  logger: Logger,
  resyncMs = 60_000,
): Promise<RunningScheduler> {
  const first = await syncSchedulers(db, queues);
  logger.info({ schedulers: first.active }, "scheduler started");
  let syncing = false;
  const timer = setInterval(() => {
    // One sync at a time: while Redis is away its commands wait, and syncs must not pile up behind them.
    if (syncing) return;
    syncing = true;
    syncSchedulers(db, queues)
      .then((r) => {
        if (r.upserted.length > 0 || r.removed.length > 0)
          logger.info({ upserted: r.upserted, removed: r.removed }, "schedulers changed");
      })
      .catch((err: unknown) =>
        logger.error(
          { err: err instanceof Error ? err.message : String(err) },
          "scheduler sync failed",
        ),
      )
      .finally(() => (syncing = false));
  }, resyncMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return Promise.resolve();
    },
  };
}
