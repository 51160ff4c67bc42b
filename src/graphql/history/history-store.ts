/**
 * History reads for many servers at once (the loaders batch a page's servers into one statement).
 * Raw samples (server_sample) are read only from `rawFrom` on, which is inside the raw window; older
 * buckets come from the per-server day rows (server_day: totals and 24 hourly slots). So no request
 * scans raw samples older than the window, and a year of one server is at most 365 day rows.
 */
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../../shared/db';
import { DAY_MS, type HistoryPlan } from './history-plan';
import { HistoryPoint, HistoryResolution, MapSpan } from './history.type';

/** date_bin's origin: buckets of whole hours and days line up with UTC midnight. */
const ORIGIN = Prisma.raw("TIMESTAMPTZ '2000-01-01 00:00:00+00'");

/**
 * Where raw samples take over from the day rows: the first UTC midnight inside the raw window (so
 * every day before it has been rolled up into server_day, and every sample after it is still kept).
 */
export function rawBoundary(now: Date, rawWindowMs: number): Date {
  const start = now.getTime() - rawWindowMs;
  return new Date(Math.ceil(start / DAY_MS) * DAY_MS);
}

const utcDay = (d: Date): string => new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS).toISOString().slice(0, 10);

interface PointRow {
  sid: number;
  at: Date;
  samples: number;
  online: number;
  pmin: number | null;
  pmax: number | null;
  psum: number;
  bmax: number | null;
  map: string | null;
}

/** Base rows (sid, t, samples, online, pmin, pmax, psum, bmax, map, len = the row's time span) at the plan's source granularity. */
function baseRows(ids: number[], plan: HistoryPlan, boundary: Date): Prisma.Sql {
  const raw = (from: Date) => Prisma.sql`
    SELECT s.game_server_id AS sid, s.crawl_at AS t, 1 AS samples, s.online::int AS online,
           CASE WHEN s.online THEN s.players::int END AS pmin, CASE WHEN s.online THEN s.players::int END AS pmax,
           CASE WHEN s.online THEN s.players::bigint ELSE 0 END AS psum, CASE WHEN s.online THEN s.bots::int END AS bmax,
           CASE WHEN s.online THEN s.map END AS map, interval '0' AS len
    FROM server_sample s
    WHERE s.game_server_id = ANY(${ids}::int[]) AND s.crawl_at >= ${from}::timestamptz AND s.crawl_at < ${plan.to}::timestamptz`;
  if (plan.resolution === HistoryResolution.RAW) return raw(plan.from);
  const rawFrom = plan.from > boundary ? plan.from : boundary;
  const days = plan.resolution === HistoryResolution.HOUR
    ? Prisma.sql`
    SELECT d.game_server_id AS sid, (d.day::timestamp AT TIME ZONE 'UTC') + (h.i - 1) * interval '1 hour' AS t,
           h.samples::int AS samples, h.online::int AS online, h.pmin::int AS pmin, h.pmax::int AS pmax,
           h.psum::bigint AS psum, h.bmax::int AS bmax, h.map AS map, interval '1 hour' AS len
    FROM server_day d
    CROSS JOIN LATERAL unnest(d.h_samples, d.h_online, d.h_players_min, d.h_players_max, d.h_players_sum, d.h_bots_max, d.h_map)
      WITH ORDINALITY AS h(samples, online, pmin, pmax, psum, bmax, map, i)
    WHERE d.game_server_id = ANY(${ids}::int[]) AND d.day >= ${utcDay(plan.from)}::date AND d.day < ${utcDay(boundary)}::date AND h.samples > 0`
    : Prisma.sql`
    SELECT d.game_server_id AS sid, d.day::timestamp AT TIME ZONE 'UTC' AS t, d.samples, d.online, d.players_min::int AS pmin,
           d.players_max::int AS pmax, d.players_sum::bigint AS psum, d.bots_max::int AS bmax, d.top_map AS map, interval '1 day' AS len
    FROM server_day d
    WHERE d.game_server_id = ANY(${ids}::int[]) AND d.day >= ${utcDay(plan.from)}::date AND d.day < ${utcDay(boundary)}::date AND d.samples > 0`;
  return plan.from < boundary ? Prisma.sql`${days} UNION ALL ${raw(rawFrom)}` : raw(rawFrom);
}

function toPoint(r: PointRow): HistoryPoint {
  return Object.assign(new HistoryPoint(), {
    at: r.at,
    samples: r.samples,
    playersMin: r.pmin,
    playersMax: r.pmax,
    playersAvg: r.samples > 0 ? Number(r.psum) / r.samples : 0,
    bots: r.bmax,
    onlineShare: r.samples > 0 ? r.online / r.samples : 0,
    map: r.map,
  });
}

/** Points per server for one plan: one statement for all `ids`. */
export async function loadHistoryPoints(db: Db, ids: number[], plan: HistoryPlan, boundary: Date): Promise<Map<number, HistoryPoint[]>> {
  const bucket = plan.resolution === HistoryResolution.RAW ? Prisma.raw('t') : Prisma.sql`date_bin(${`${plan.bucketMs / 1000} seconds`}::interval, t, ${ORIGIN})`;
  const rows = await db.$queryRaw<PointRow[]>`
    WITH base AS (${baseRows(ids, plan, boundary)})
    SELECT sid, ${bucket} AS at, sum(samples)::int AS samples, sum(online)::int AS online, min(pmin)::int AS pmin,
           max(pmax)::int AS pmax, sum(psum)::float8 AS psum, max(bmax)::int AS bmax,
           mode() WITHIN GROUP (ORDER BY map) AS map
    FROM base
    WHERE t >= ${plan.from}::timestamptz AND t < ${plan.to}::timestamptz
    GROUP BY sid, 2
    ORDER BY sid, 2`;
  const bySid = new Map<number, HistoryPoint[]>(ids.map((id) => [id, []]));
  for (const r of rows) bySid.get(r.sid)?.push(toPoint(r));
  return bySid;
}

/**
 * Map timeline per server: consecutive samples (raw) or hours (older) on the same map merged into one
 * span. Offline samples carry no map and do not split a span.
 */
export async function loadMapTimelines(db: Db, ids: number[], plan: HistoryPlan, boundary: Date): Promise<Map<number, MapSpan[]>> {
  // Map changes need finer steps than DAY rows give: read hourly slots before the boundary whatever the plan.
  const fine: HistoryPlan = plan.resolution === HistoryResolution.DAY ? { ...plan, resolution: HistoryResolution.HOUR } : plan;
  const rows = await db.$queryRaw<Array<{ sid: number; map: string; from: Date; to: Date }>>`
    WITH base AS (${baseRows(ids, fine, boundary)}),
    spans AS (
      SELECT sid, t, map, t + len AS t_end
      FROM base WHERE map IS NOT NULL AND t >= ${plan.from}::timestamptz AND t < ${plan.to}::timestamptz
    ),
    marked AS (
      SELECT *, CASE WHEN map IS DISTINCT FROM lag(map) OVER (PARTITION BY sid ORDER BY t) THEN 1 ELSE 0 END AS change FROM spans
    ),
    islands AS (SELECT *, sum(change) OVER (PARTITION BY sid ORDER BY t) AS island FROM marked)
    SELECT sid, map, min(t) AS "from", max(t_end) AS "to" FROM islands GROUP BY sid, island, map ORDER BY sid, min(t)`;
  const bySid = new Map<number, MapSpan[]>(ids.map((id) => [id, []]));
  for (const r of rows) bySid.get(r.sid)?.push(Object.assign(new MapSpan(), { map: r.map, from: r.from, to: r.to }));
  return bySid;
}
