/**
 * Re-bucketing of the stored series (src/history/ reads RAW samples, hourly slots or days) into the
 * wider buckets AUTO picks, so a long range stays at a few hundred points. Pure functions; buckets
 * start at UTC midnight multiples (from 2000-01-01), like date_bin.
 */
import type { PopulationPoint as StorePopulationPoint } from "../../history/population";
import type { HistoryBucket, HistoryPoint as StorePoint } from "../../history/server-history";
import { HistoryPoint, PopulationPoint } from "./history.type";

const ORIGIN_MS = Date.UTC(2000, 0, 1);

const bucketStart = (at: Date, bucketMs: number): number =>
  ORIGIN_MS + Math.floor((at.getTime() - ORIGIN_MS) / bucketMs) * bucketMs;

function groupBy<T extends { at: Date }>(
  points: readonly T[],
  bucketMs: number,
): Array<[number, T[]]> {
  const groups = new Map<number, T[]>();
  for (const p of points) {
    const k = bucketStart(p.at, bucketMs);
    const g = groups.get(k);
    if (g) g.push(p);
    else groups.set(k, [p]);
  }
  return [...groups].sort((a, b) => a[0] - b[0]);
}

/** A stored point, or a bucket PostgreSQL merged (readServerHistoryBuckets), as the API serves it. */
export function toApiPoint(p: StorePoint | HistoryBucket): HistoryPoint {
  return Object.assign(new HistoryPoint(), {
    at: p.at,
    samples: p.samples,
    playersMin: p.playersMin,
    playersAvg: p.playersAvg,
    playersMax: p.playersMax,
    bots: p.botsMax,
    onlineShare: p.onlineShare,
    map: p.map,
  });
}

const minOf = (xs: Array<number | null>): number | null =>
  xs.reduce<number | null>((m, x) => (x === null ? m : m === null ? x : Math.min(m, x)), null);
const maxOf = (xs: Array<number | null>): number | null =>
  xs.reduce<number | null>((m, x) => (x === null ? m : m === null ? x : Math.max(m, x)), null);

/** Server points merged into buckets of `bucketMs` (points already that wide or wider pass as they are). */
export function rebucketHistory(
  points: readonly StorePoint[],
  bucketMs: number,
  nativeMs: number,
): HistoryPoint[] {
  if (bucketMs <= nativeMs || bucketMs === 0) return points.map(toApiPoint);
  return groupBy(points, bucketMs).map(([start, group]) => {
    const samples = group.reduce((s, p) => s + p.samples, 0);
    const mapWeight = new Map<string, number>();
    for (const p of group)
      if (p.map) mapWeight.set(p.map, (mapWeight.get(p.map) ?? 0) + p.samples * p.onlineShare);
    let map: string | null = null;
    let best = -1;
    for (const [m, w] of [...mapWeight].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
      if (w > best) [map, best] = [m, w];
    return Object.assign(new HistoryPoint(), {
      at: new Date(start),
      samples,
      playersMin: minOf(group.map((p) => p.playersMin)),
      playersMax: maxOf(group.map((p) => p.playersMax)),
      // Weighted by samples: the average over every sample in the bucket, as for a native point.
      playersAvg:
        samples > 0 ? group.reduce((s, p) => s + p.playersAvg * p.samples, 0) / samples : 0,
      bots: maxOf(group.map((p) => p.botsMax)),
      onlineShare:
        samples > 0 ? group.reduce((s, p) => s + p.onlineShare * p.samples, 0) / samples : 0,
      map,
    });
  });
}

/** A population point (stored, or merged by readPopulationBuckets) as the API serves it. */
export function toApiPopulationPoint(p: StorePopulationPoint): PopulationPoint {
  return Object.assign(new PopulationPoint(), p);
}

/** Population points merged into buckets of `bucketMs`: averages of the rollup buckets, peaks as maxima, minima as minima. */
export function rebucketPopulation(
  points: readonly StorePopulationPoint[],
  bucketMs: number,
  nativeMs: number,
): PopulationPoint[] {
  const toApi = (at: Date, group: readonly StorePopulationPoint[]): PopulationPoint => {
    const avg = (f: (p: StorePopulationPoint) => number): number =>
      group.reduce((s, p) => s + f(p), 0) / group.length;
    return Object.assign(new PopulationPoint(), {
      at,
      serversOnline: avg((p) => p.serversOnline),
      serversSeen: Math.max(...group.map((p) => p.serversSeen)),
      playersAvg: avg((p) => p.playersAvg),
      playersPeak: Math.max(...group.map((p) => p.playersPeak)),
      playersMin: Math.min(...group.map((p) => p.playersMin)),
      botsAvg: avg((p) => p.botsAvg),
    });
  };
  if (bucketMs <= nativeMs) return points.map((p) => toApi(p.at, [p]));
  return groupBy(points, bucketMs).map(([start, group]) => toApi(new Date(start), group));
}
