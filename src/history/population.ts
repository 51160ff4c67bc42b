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
