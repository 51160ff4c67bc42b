/**
 * The scheduler role: master sources from the configuration are upserted into master_source (by name;
 * sources added through the API live only there), and one BullMQ job scheduler per enabled source
 * (`sweep-<name>`, every intervalMs) starts its crawls; schedulers of removed or disabled sources go.
 * A retention scheduler runs apply-retention hourly. Re-synced periodically so API changes apply.
 */
import type { Prisma } from '../generated/prisma/client';
import type { MasterSourceConfig } from '../shared/config';
import type { Db } from '../shared/db';
import type { Logger } from '../shared/logger';
import { JOB, RETENTION_SCHEDULER_ID, schedulerIdOf, type CrawlQueues, type StartCrawlData } from './queues';

const RETENTION_EVERY_MS = 3600_000;

export async function upsertConfiguredSources(db: Db, sources: readonly MasterSourceConfig[], defaultIntervalMs: number): Promise<void> {
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
    await db.masterSource.upsert({ where: { name: s.name }, create: { name: s.name, ...data }, update: data });
  }
}

export async function syncSchedulers(db: Db, queues: Pick<CrawlQueues, 'crawl'>): Promise<{ active: string[]; removed: string[] }> {
  const sources = await db.masterSource.findMany({ where: { enabled: true } });
  const active: string[] = [];
  for (const s of sources) {
    const id = schedulerIdOf(s.name);
    await queues.crawl.upsertJobScheduler(id, { every: s.intervalMs }, { name: JOB.startCrawl, data: { sourceId: s.id } satisfies StartCrawlData });
    active.push(id);
  }
  await queues.crawl.upsertJobScheduler(RETENTION_SCHEDULER_ID, { every: RETENTION_EVERY_MS }, { name: JOB.applyRetention, data: {} });
  const removed: string[] = [];
  for (const existing of await queues.crawl.getJobSchedulers()) {
    const id = existing.key;
    if (id.startsWith('sweep-') && !active.includes(id)) {
      await queues.crawl.removeJobScheduler(id);
      removed.push(id);
    }
  }
  return { active, removed };
}

export interface RunningScheduler {
  stop(): Promise<void>;
}

export async function startScheduler(db: Db, queues: Pick<CrawlQueues, 'crawl'>, logger: Logger, resyncMs = 60_000): Promise<RunningScheduler> {
  const first = await syncSchedulers(db, queues);
  logger.info({ schedulers: first.active }, 'scheduler started');
  const timer = setInterval(() => {
    syncSchedulers(db, queues).catch((err: unknown) => logger.error({ err: err instanceof Error ? err.message : String(err) }, 'scheduler sync failed'));
  }, resyncMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return Promise.resolve();
    },
  };
}
