/**
 * A server's history as stored (docs/storage.md): RAW samples inside the raw window, the hourly slots and
 * the day totals of server days outside it (server_day_range: the recent days' server_day rows and the
 * older days compacted into server_day_month). Which of the three a request reads, and whether it may, is the
 * caller's decision (the API's history plan); this module reads what it is asked for.
 */
import { Prisma } from "../generated/prisma/client";
import type { Db } from "../shared/db";
import { toId } from "../shared/ids";
import { DAY_MS, HOUR_MS, floorHour, utcDay } from "./time";

/** Where bucket boundaries start (as date_bin's origin would; history-buckets.ts uses the same). */
const ORIGIN_MS = Date.UTC(2000, 0, 1);

/** The table a series is read from: raw samples, hourly slots or days. */
export type SeriesResolution = "RAW" | "HOUR" | "DAY";

export interface HistoryPoint {
  at: Date;
  /** Samples behind the point (1 for RAW). */
  samples: number;
  /** Share of samples the server answered (0-1). */
  onlineShare: number;
  playersMin: number | null;
  /** Average over all samples (an unanswered sample counts 0). */
  playersAvg: number;
  playersMax: number | null;
  botsMax: number | null;
  /** RAW only. */
  maxPlayers: number | null;
  /** RAW: the map; HOUR/DAY: the most-played map. */
  map: string | null;
  /** RAW only. */
  pingMs: number | null;
}

interface HistoryRow {
  id: bigint;
  at: Date;
  samples: number;
  online: number;
  pmin: number | null;
  pmax: number | null;
  psum: number;
  bmax: number | null;
  max_players: number | null;
  map: string | null;
  ping_ms: number | null;
}

/**
 * History of many servers in one statement (a page of servers costs one query, not one per server).
 * Points are in time order; servers without any point get an empty list.
 */
export async function readServerHistories(
  db: Db,
  serverIds: readonly number[],
  o: { from: Date; to: Date; resolution: SeriesResolution },
): Promise<Map<number, HistoryPoint[]>> {
  const ids = [...new Set(serverIds)];
  const series = new Map<number, HistoryPoint[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return series;
  let rows: HistoryRow[];
  if (o.resolution === "RAW") {
    rows = await db.$queryRaw<HistoryRow[]>`
      SELECT game_server_id AS id, crawl_at AS at, 1 AS samples, online::int AS online,
        CASE WHEN online THEN players END AS pmin, CASE WHEN online THEN players END AS pmax, players::int AS psum,
        bots AS bmax, max_players, map, ping_ms
      FROM server_sample_range(${o.from}::timestamptz, ${o.to}::timestamptz)
      WHERE game_server_id = ANY(${ids}::bigint[])
      ORDER BY game_server_id, crawl_at, crawl_id`;
  } else if (o.resolution === "HOUR") {
    rows = await db.$queryRaw<HistoryRow[]>`
      SELECT * FROM (
        SELECT d.game_server_id AS id, (d.day::timestamp + (u.i - 1) * interval '1 hour') AT TIME ZONE 'UTC' AS at,
          u.s::int AS samples, COALESCE(u.o, 0)::int AS online, u.pmin, u.pmax, COALESCE(u.psum, 0) AS psum, u.bmax,
          NULL::int AS max_players, u.m AS map, NULL::int AS ping_ms
        FROM server_day_range(${utcDay(o.from)}::date, ${utcDay(o.to)}::date) d,
          unnest(d.h_samples, d.h_online, d.h_players_min, d.h_players_max, d.h_players_sum, d.h_bots_max, d.h_map)
            WITH ORDINALITY AS u(s, o, pmin, pmax, psum, bmax, m, i)
        WHERE d.game_server_id = ANY(${ids}::bigint[]) AND u.s IS NOT NULL AND u.s > 0
      ) h WHERE h.at >= ${floorHour(o.from)} AND h.at < ${o.to}
      ORDER BY id, at`;
  } else {
    rows = await db.$queryRaw<HistoryRow[]>`
      SELECT game_server_id AS id, day::timestamp AT TIME ZONE 'UTC' AS at, samples, online, players_min AS pmin,
        players_max AS pmax, players_sum AS psum, bots_max AS bmax, NULL::int AS max_players, top_map AS map, NULL::int AS ping_ms
      FROM server_day_range(${utcDay(o.from)}::date, ${o.to}::date)
      WHERE game_server_id = ANY(${ids}::bigint[]) AND samples > 0 AND day::timestamp AT TIME ZONE 'UTC' < ${o.to}
      ORDER BY game_server_id, day`;
  }
  for (const r of rows) {
    const samples = Number(r.samples);
    series.get(toId(r.id))?.push({
      at: r.at,
      samples,
      onlineShare: samples > 0 ? Number(r.online) / samples : 0,
      playersMin: r.pmin === null ? null : Number(r.pmin),
      playersAvg: samples > 0 ? Number(r.psum) / samples : 0,
      playersMax: r.pmax === null ? null : Number(r.pmax),
      botsMax: r.bmax === null ? null : Number(r.bmax),
      maxPlayers: r.max_players === null ? null : Number(r.max_players),
      map: r.map,
      pingMs: r.ping_ms === null ? null : Number(r.ping_ms),
    });
  }
  return series;
}

export interface MapSpan {
  map: string;
  from: Date;
  to: Date;
}

/** Which map ran when: consecutive points with the same map merged (`stepMs`: the width of one point). */
export function mapTimeline(points: readonly HistoryPoint[], stepMs: number): MapSpan[] {
  const spans: MapSpan[] = [];
  for (const p of points) {
    if (p.map === null || p.map === "") continue;
    const last = spans[spans.length - 1];
    const end = new Date(p.at.getTime() + stepMs);
    if (last && last.map === p.map && p.at.getTime() - last.to.getTime() <= stepMs) last.to = end;
    else spans.push({ map: p.map, from: p.at, to: end });
  }
  return spans;
}

/** A point of a series bucketed by SQL (readServerHistoryBuckets): the fields the API serves. */
export interface HistoryBucket {
  at: Date;
  samples: number;
  onlineShare: number;
  playersMin: number | null;
  playersAvg: number;
  playersMax: number | null;
  botsMax: number | null;
  map: string | null;
}

interface BucketRow {
  id: bigint;
  b: number;
  samples: number;
  pmin: number | null;
  pmax: number | null;
  pavg: number;
  share: number;
  bmax: number | null;
  map: string | null;
}

/**
 * History of many servers, HOUR slots or days merged into buckets of `bucketMs` (a multiple of the slot)
 * by PostgreSQL, so a 30-day chart sends ~240 rows of a few numbers instead of every slot's arrays.
 * Buckets start at multiples of `bucketMs` from 2000-01-01 UTC. The sums are the ones the per-slot
 * re-bucketing makes (src/graphql/history/history-buckets.ts, rebucketHistory), in time order and in
 * double precision, so both give the same numbers to the last bit: playersAvg and onlineShare are the
 * slot averages weighted by samples, the map the one with most online samples (ties: the first name in
 * code-point order).
 */
export async function readServerHistoryBuckets(
  db: Db,
  serverIds: readonly number[],
  o: { from: Date; to: Date; resolution: "HOUR" | "DAY"; bucketMs: number },
): Promise<Map<number, HistoryBucket[]>> {
  const ids = [...new Set(serverIds)];
  const series = new Map<number, HistoryBucket[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return series;
  // Slots are numbered from 2000-01-01 UTC (hours or days) and grouped by integer division: cheaper for
  // PostgreSQL than timestamps through date_bin, and the same buckets (the range never reaches before 2000).
  const slotMs = o.resolution === "HOUR" ? HOUR_MS : DAY_MS;
  const perBucket = Math.max(1, Math.round(o.bucketMs / slotMs));
  const slots =
    o.resolution === "HOUR"
      ? Prisma.sql`
        SELECT * FROM (
          SELECT d.game_server_id AS id, (d.day - DATE '2000-01-01') * 24 + (u.i::int - 1) AS t,
            u.s::int AS s, COALESCE(u.o, 0)::int AS o, u.pmin::int AS pmin, u.pmax::int AS pmax, COALESCE(u.psum, 0)::bigint AS psum, u.bmax::int AS bmax, u.m AS m
          FROM server_day_range(${utcDay(o.from)}::date, ${utcDay(o.to)}::date) d,
            unnest(d.h_samples, d.h_online, d.h_players_min, d.h_players_max, d.h_players_sum, d.h_bots_max, d.h_map)
              WITH ORDINALITY AS u(s, o, pmin, pmax, psum, bmax, m, i)
          WHERE d.game_server_id = ANY(${ids}::bigint[]) AND u.s IS NOT NULL AND u.s > 0
        ) h WHERE h.t >= ${(floorHour(o.from).getTime() - ORIGIN_MS) / HOUR_MS} AND h.t < ${Math.ceil((o.to.getTime() - ORIGIN_MS) / HOUR_MS)}`
      : Prisma.sql`
        SELECT game_server_id AS id, day - DATE '2000-01-01' AS t, samples AS s, online AS o, players_min::int AS pmin,
          players_max::int AS pmax, players_sum::bigint AS psum, bots_max::int AS bmax, top_map AS m
        FROM server_day_range(${utcDay(o.from)}::date, ${o.to}::date)
        WHERE game_server_id = ANY(${ids}::bigint[]) AND samples > 0 AND day::timestamp AT TIME ZONE 'UTC' < ${o.to}`;
  const rows = await db.$queryRaw<BucketRow[]>`
    WITH p AS (
      SELECT id, t, t / ${perBucket}::int AS b, s, o, pmin, pmax, psum, bmax, m FROM (${slots}) slots
    ), maps AS (
      SELECT DISTINCT ON (id, b) id, b, m
      FROM (SELECT id, b, m, sum(s * (o::float8 / s) ORDER BY t) AS w FROM p WHERE m <> '' GROUP BY id, b, m) w
      ORDER BY id, b, w DESC, m COLLATE "C"
    )
    SELECT g.id, g.b, g.samples, g.pmin, g.pmax, g.pavg, g.share, g.bmax, maps.m AS map FROM (
      SELECT id, b, sum(s)::int AS samples, min(pmin) AS pmin, max(pmax) AS pmax,
        sum((psum::float8 / s) * s ORDER BY t) / sum(s) AS pavg, sum((o::float8 / s) * s ORDER BY t) / sum(s) AS share, max(bmax) AS bmax
      FROM p GROUP BY id, b
    ) g LEFT JOIN maps ON maps.id = g.id AND maps.b = g.b
    ORDER BY g.id, g.b`;
  for (const r of rows) {
    series.get(toId(r.id))?.push({
      at: new Date(ORIGIN_MS + Number(r.b) * perBucket * slotMs),
      samples: Number(r.samples),
      onlineShare: Number(r.share),
      playersMin: r.pmin === null ? null : Number(r.pmin),
      playersAvg: Number(r.pavg),
      playersMax: r.pmax === null ? null : Number(r.pmax),
      botsMax: r.bmax === null ? null : Number(r.bmax),
      map: r.map,
    });
  }
  return series;
}
