/**
 * Per-request DataLoaders: every field that would otherwise read per row (a server's source, its
 * history, a source's crawls) is batched into one statement per distinct argument set.
 */
import DataLoader from "dataloader";
import type { Crawl, CrawlRun, MasterSource } from "../generated/prisma/client";
import type { Db } from "../shared/db";
import { toId } from "../shared/ids";
import {
  readServerHistories,
  readServerHistoryBuckets,
  type HistoryBucket,
  type HistoryPoint as StorePoint,
} from "../history/server-history";
import type { HistoryPlan } from "./history/history-plan";

export interface HistoryKey {
  gameServerId: number;
  plan: HistoryPlan;
}

const planKey = (k: HistoryKey): string =>
  `${k.plan.resolution}|${k.plan.bucketMs}|${k.plan.from.getTime()}|${k.plan.to.getTime()}`;

/** Keys grouped by plan: one statement per distinct plan. */
function byPlan(keys: readonly HistoryKey[]): Map<string, HistoryKey[]> {
  const groups = new Map<string, HistoryKey[]>();
  for (const k of keys) {
    const g = groups.get(planKey(k));
    if (g) g.push(k);
    else groups.set(planKey(k), [k]);
  }
  return groups;
}

/**
 * The stored series (RAW samples, hourly slots or days) of many servers: keys are grouped by plan and
 * each group is one statement (readServerHistories), so a page of 100 servers with history is one
 * query, not 100.
 */
function loadHistories(db: Db) {
  return async (keys: readonly HistoryKey[]): Promise<StorePoint[][]> => {
    const results = new Map<string, Map<number, StorePoint[]>>();
    await Promise.all(
      [...byPlan(keys)].map(async ([pk, ks]) => {
        const { plan } = ks[0] as HistoryKey;
        results.set(
          pk,
          await readServerHistories(
            db,
            ks.map((k) => k.gameServerId),
            { from: plan.from, to: plan.to, resolution: plan.resolution },
          ),
        );
      }),
    );
    return keys.map((k) => results.get(planKey(k))?.get(k.gameServerId) ?? []);
  };
}

/**
 * The same series already merged into the plan's buckets by PostgreSQL (HOUR or DAY plans whose buckets
 * are wider than the stored slot): what `points` serves, without reading every slot into JS.
 */
function loadHistoryBuckets(db: Db) {
  return async (keys: readonly HistoryKey[]): Promise<HistoryBucket[][]> => {
    const results = new Map<string, Map<number, HistoryBucket[]>>();
    await Promise.all(
      [...byPlan(keys)].map(async ([pk, ks]) => {
        const { plan } = ks[0] as HistoryKey;
        if (plan.resolution === "RAW") throw new Error("RAW history is not bucketed");
        results.set(
          pk,
          await readServerHistoryBuckets(
            db,
            ks.map((k) => k.gameServerId),
            { from: plan.from, to: plan.to, resolution: plan.resolution, bucketMs: plan.bucketMs },
          ),
        );
      }),
    );
    return keys.map((k) => results.get(planKey(k))?.get(k.gameServerId) ?? []);
  };
}

export function createLoaders(db: Db) {
  return {
    source: new DataLoader<number, MasterSource | null>(async (ids) => {
      const rows = await db.masterSource.findMany({ where: { id: { in: [...ids] } } });
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    /** Latest crawls of a source, newest first; key `sourceId:count`. */
    crawlsBySource: new DataLoader<string, Crawl[]>(async (keys) => {
      const parsed = keys.map((k) => k.split(":").map(Number) as [number, number]);
      const most = Math.max(...parsed.map(([, n]) => n));
      const ids = [...new Set(parsed.map(([id]) => id))];
      const rows = await db.$queryRaw<Array<{ id: bigint }>>`
        SELECT id FROM (
          SELECT c.id, row_number() OVER (PARTITION BY c.source_id ORDER BY c.started_at DESC, c.id DESC) AS n
          FROM crawl c WHERE c.source_id = ANY(${ids}::int[])
        ) x WHERE n <= ${most}`;
      const crawls = await db.crawl.findMany({
        where: { id: { in: rows.map((r) => r.id) } },
        orderBy: [{ startedAt: "desc" }, { id: "desc" }],
      });
      return parsed.map(([id, n]) => crawls.filter((c) => c.sourceId === id).slice(0, n));
    }),
    runsByCrawl: new DataLoader<number, CrawlRun[]>(async (ids) => {
      const rows = await db.crawlRun.findMany({
        where: { crawlId: { in: [...ids] } },
        orderBy: [{ region: "asc" }, { split: "asc" }],
      });
      return ids.map((id) => rows.filter((r) => toId(r.crawlId) === id));
    }),
    history: new DataLoader<HistoryKey, StorePoint[], string>(loadHistories(db), {
      cacheKeyFn: (k) => `${k.gameServerId}|${planKey(k)}`,
    }),
    historyBuckets: new DataLoader<HistoryKey, HistoryBucket[], string>(loadHistoryBuckets(db), {
      cacheKeyFn: (k) => `${k.gameServerId}|${planKey(k)}`,
    }),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
