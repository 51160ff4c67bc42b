/**
 * Aggregate series (a game, a map, a region, everything) as stored in population_rollup, hourly and daily
 * (docs/storage.md). Read from the rollups only, never from raw samples; the crawler writes them
 * (src/crawler/store/history-store.ts).
 */
import type { Db } from "../shared/db";
import { floorHour, utcDay } from "./time";

export type PopulationDimensionName =
  "ALL" | "APP" | "FOLDER" | "MAP" | "REGION" | "COUNTRY" | "PROTOCOL";

/** The rollup a population series is read from. */
export type RollupResolution = "HOUR" | "DAY";

export interface PopulationPoint {
  at: Date;
  /** Average over the bucket's moments of the servers online (a moment: see playersPeak). */
  serversOnline: number;
  /** Servers with a sample in the bucket (DAY: the largest hourly count). */
  serversSeen: number;
  /** Mean over the bucket's moments of the total players at each moment. */
  playersAvg: number;
  /**
   * Most players at one moment, across all sources. A moment is a crawl instant (the start of any source's
   * crawl in the hour); at each one every server counts once, with its latest sample at or before it
   * (docs/storage.md, "Population rollups"). DAY: the largest hourly peak.
   */
  playersPeak: number;
  /** Fewest players at one moment (0 when the key had no server at some moment); DAY: the smallest hourly one. */
  playersMin: number;
  botsAvg: number;
}

/**
 * The buckets of one dimension key that start in [from's bucket, to), oldest first. Suspected fakes are
 * left out unless `withSuspectedFakes` (their rows exist only for buckets they changed: elsewhere the row
 * without them is the same series).
 */
export async function readPopulation(
  db: Db,
  filter: { dimension: PopulationDimensionName; key?: string },
  o: { from: Date; to: Date; resolution: RollupResolution; withSuspectedFakes?: boolean },
): Promise<PopulationPoint[]> {
  const from = o.resolution === "DAY" ? utcDay(o.from) : floorHour(o.from);
  const key = filter.dimension === "ALL" ? "" : (filter.key ?? "");
  const rows = await db.$queryRaw<
    {
      at: Date;
      servers_online: number;
      servers_seen: number;
      players_avg: number;
      players_peak: number;
      players_min: number;
      bots_avg: number;
    }[]
  >`
    SELECT DISTINCT ON (bucket_at) bucket_at AS at, servers_online, servers_seen, players_avg, players_peak, players_min, bots_avg FROM population_rollup
    WHERE resolution = ${o.resolution}::"RollupResolution" AND dimension = ${filter.dimension}::"PopulationDimension" AND key = ${key}
      AND bucket_at >= ${from} AND bucket_at < ${o.to} AND with_suspected_fakes IN (false, ${o.withSuspectedFakes ?? false})
    ORDER BY bucket_at, with_suspected_fakes DESC`;
  return rows.map((r) => ({
    at: r.at,
    serversOnline: Number(r.servers_online),
    serversSeen: Number(r.servers_seen),
    playersAvg: Number(r.players_avg),
    playersPeak: Number(r.players_peak),
    playersMin: Number(r.players_min),
    botsAvg: Number(r.bots_avg),
  }));
}

/**
 * The same series merged into buckets of `bucketMs` (a multiple of the rollup's) by PostgreSQL, starting
 * at multiples of `bucketMs` from 2000-01-01 UTC: averages are the mean of the rollup buckets, peaks and
 * servers seen the largest, minima the smallest. The means are summed in time order in double precision
 * from the values as the rollup's real columns print, as the per-bucket merge in JS
 * (src/graphql/history/history-buckets.ts, rebucketPopulation) sums them, so both give the same numbers.
 */
export async function readPopulationBuckets(
  db: Db,
  filter: { dimension: PopulationDimensionName; key?: string },
  o: {
    from: Date;
    to: Date;
    resolution: RollupResolution;
    bucketMs: number;
    withSuspectedFakes?: boolean;
  },
): Promise<PopulationPoint[]> {
  const from = o.resolution === "DAY" ? utcDay(o.from) : floorHour(o.from);
  const key = filter.dimension === "ALL" ? "" : (filter.key ?? "");
  const bucket = `${Math.round(o.bucketMs / 1000)} seconds`;
  const rows = await db.$queryRaw<
    {
      at_ms: number;
      servers_online: number;
      servers_seen: number;
      players_avg: number;
      players_peak: number;
      players_min: number;
      bots_avg: number;
    }[]
  >`
    SELECT (extract(epoch FROM b) * 1000)::float8 AS at_ms,
      sum(servers_online::text::float8 ORDER BY at) / count(*) AS servers_online, max(servers_seen) AS servers_seen,
      sum(players_avg::text::float8 ORDER BY at) / count(*) AS players_avg, max(players_peak) AS players_peak,
      min(players_min) AS players_min, sum(bots_avg::text::float8 ORDER BY at) / count(*) AS bots_avg
    FROM (
      SELECT DISTINCT ON (bucket_at) bucket_at AS at, date_bin(${bucket}::interval, bucket_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS b,
        servers_online, servers_seen, players_avg, players_peak, players_min, bots_avg
      FROM population_rollup
      WHERE resolution = ${o.resolution}::"RollupResolution" AND dimension = ${filter.dimension}::"PopulationDimension" AND key = ${key}
        AND bucket_at >= ${from} AND bucket_at < ${o.to} AND with_suspected_fakes IN (false, ${o.withSuspectedFakes ?? false})
      ORDER BY bucket_at, with_suspected_fakes DESC
    ) r
    GROUP BY b ORDER BY b`;
  return rows.map((r) => ({
    at: new Date(Number(r.at_ms)),
    serversOnline: Number(r.servers_online),
    serversSeen: Number(r.servers_seen),
    playersAvg: Number(r.players_avg),
    playersPeak: Number(r.players_peak),
    playersMin: Number(r.players_min),
    botsAvg: Number(r.bots_avg),
  }));
}
