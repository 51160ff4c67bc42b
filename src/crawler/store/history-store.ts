/**
 * History: raw samples (server_sample, one per server per crawl, day partitions kept for the raw
 * window) rolled up into server_day (one row per server per UTC day: day totals + 24 hourly slots in
 * arrays) and population_rollup (hourly and daily aggregates per game, map, region, ...).
 *
 * Rollups are recomputed from the raw samples of an hour, never added to, so re-rolling an hour (each
 * crawl that finishes re-rolls its hour) gives the same rows. Reads never touch raw samples older than
 * the window. Layout and numbers: docs/storage.md.
 */
import type { Db } from '../../shared/db';
import { toId } from '../../shared/ids';
import { dropSamplePartitionsBefore, listSamplePartitions, utcDay } from './partitions';

const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** Advisory lock class of population re-rolls (the key is the hour or day). */
const ROLLUP_LOCK_CLASS = 7_271_007;
/**
 * Rollups wait for each other (advisory locks below) and re-read the hour's samples: Prisma's 5 s default
 * transaction timeout expired under load in the demo.
 */
const ROLLUP_TX_OPTIONS = { timeout: 120_000, maxWait: 30_000 };
/** server_day rows of one day: rolled up by one writer at a time. */
const SERVER_ROLLUP_LOCK_CLASS = 7_271_009;

const floorHour = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);

/** Rolls up every hour from `from`'s hour to `to`'s hour (inclusive), then the days they touch. */
export async function rollupRange(db: Db, from: Date, to: Date): Promise<void> {
  const days = new Set<number>();
  for (let h = floorHour(from).getTime(); h <= to.getTime(); h += HOUR_MS) {
    const hour = new Date(h);
    await rollupServerHour(db, hour);
    await rollupPopulationHour(db, hour);
    days.add(utcDay(hour).getTime());
  }
  for (const d of days) {
    const day = new Date(d);
    await rollupServerDayTotals(db, day, floorHour(from) > day ? floorHour(from) : day, new Date(Math.min(d + DAY_MS, floorHour(to).getTime() + HOUR_MS)));
    await rollupPopulationDay(db, day);
  }
}

async function rollupServerHour(db: Db, hour: Date): Promise<void> {
  const end = new Date(hour.getTime() + HOUR_MS);
  const day = utcDay(hour);
  const slot = hour.getUTCHours() + 1;
  // Arrays are 24 slots: the hour's value at `slot`, NULL elsewhere; on conflict only `slot` is set.
  // Two crawls finishing together roll the hour up one after the other: interleaved, the two upserts
  // over the same server_day rows deadlocked (40P01).
  await db.$transaction([
    db.$executeRaw`SELECT pg_advisory_xact_lock(${SERVER_ROLLUP_LOCK_CLASS}, ${Math.floor(day.getTime() / DAY_MS) % 2_000_000_000})`,
    db.$executeRaw`
    WITH h AS (
      SELECT game_server_id AS id,
        count(*)::int AS samples,
        count(*) FILTER (WHERE online)::int AS online,
        min(players) FILTER (WHERE online) AS pmin,
        max(players) FILTER (WHERE online) AS pmax,
        sum(players)::int AS psum,
        max(bots) AS bmax,
        mode() WITHIN GROUP (ORDER BY map) FILTER (WHERE online AND map IS NOT NULL AND map <> '') AS top_map
      FROM server_sample WHERE crawl_at >= ${hour} AND crawl_at < ${end}
      GROUP BY game_server_id
    ), pad AS (SELECT ${slot}::int - 1 AS before, 24 - ${slot}::int AS after)
    INSERT INTO server_day AS d (game_server_id, day, h_samples, h_online, h_players_min, h_players_max, h_players_sum, h_bots_max, h_map)
    SELECT h.id, ${day}::date,
      array_fill(NULL::smallint, ARRAY[pad.before]) || LEAST(h.samples, 32767)::smallint || array_fill(NULL::smallint, ARRAY[pad.after]),
      array_fill(NULL::smallint, ARRAY[pad.before]) || LEAST(h.online, 32767)::smallint || array_fill(NULL::smallint, ARRAY[pad.after]),
      array_fill(NULL::smallint, ARRAY[pad.before]) || h.pmin || array_fill(NULL::smallint, ARRAY[pad.after]),
      array_fill(NULL::smallint, ARRAY[pad.before]) || h.pmax || array_fill(NULL::smallint, ARRAY[pad.after]),
      array_fill(NULL::int, ARRAY[pad.before]) || h.psum || array_fill(NULL::int, ARRAY[pad.after]),
      array_fill(NULL::smallint, ARRAY[pad.before]) || h.bmax || array_fill(NULL::smallint, ARRAY[pad.after]),
      array_fill(NULL::text, ARRAY[pad.before]) || h.top_map || array_fill(NULL::text, ARRAY[pad.after])
    FROM h, pad
    ON CONFLICT (game_server_id, day) DO UPDATE SET
      h_samples[${slot}::int] = EXCLUDED.h_samples[${slot}::int],
      h_online[${slot}::int] = EXCLUDED.h_online[${slot}::int],
      h_players_min[${slot}::int] = EXCLUDED.h_players_min[${slot}::int],
      h_players_max[${slot}::int] = EXCLUDED.h_players_max[${slot}::int],
      h_players_sum[${slot}::int] = EXCLUDED.h_players_sum[${slot}::int],
      h_bots_max[${slot}::int] = EXCLUDED.h_bots_max[${slot}::int],
      h_map[${slot}::int] = EXCLUDED.h_map[${slot}::int]`,
  ], ROLLUP_TX_OPTIONS);
}

/** Day totals from the hourly slots, for the servers sampled between `from` and `to`. */
async function rollupServerDayTotals(db: Db, day: Date, from: Date, to: Date): Promise<void> {
  await db.$transaction([
    db.$executeRaw`SELECT pg_advisory_xact_lock(${SERVER_ROLLUP_LOCK_CLASS}, ${Math.floor(day.getTime() / DAY_MS) % 2_000_000_000})`,
    db.$executeRaw`
    UPDATE server_day d SET
      samples = COALESCE((SELECT sum(x) FROM unnest(d.h_samples) x), 0),
      online = COALESCE((SELECT sum(x) FROM unnest(d.h_online) x), 0),
      players_min = (SELECT min(x) FROM unnest(d.h_players_min) x),
      players_max = (SELECT max(x) FROM unnest(d.h_players_max) x),
      players_sum = COALESCE((SELECT sum(x) FROM unnest(d.h_players_sum) x), 0),
      bots_max = (SELECT max(x) FROM unnest(d.h_bots_max) x),
      top_map = (SELECT m FROM unnest(d.h_map, d.h_online) AS u(m, o) WHERE m IS NOT NULL GROUP BY m ORDER BY sum(o) DESC NULLS LAST, m LIMIT 1)
    WHERE d.day = ${day}::date
      AND d.game_server_id IN (SELECT DISTINCT game_server_id FROM server_sample WHERE crawl_at >= ${from} AND crawl_at < ${to})`,
  ], ROLLUP_TX_OPTIONS);
}

async function rollupPopulationHour(db: Db, hour: Date): Promise<void> {
  const end = new Date(hour.getTime() + HOUR_MS);
  await db.$transaction([
    // Two sources finishing in the same hour re-roll it one after the other, not interleaved.
    db.$executeRaw`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, ${Math.floor(hour.getTime() / HOUR_MS) % 2_000_000_000})`,
    db.$executeRaw`DELETE FROM population_rollup WHERE resolution = 'HOUR' AND bucket_at = ${hour}`,
    // Per server, each sample weighs 1/n of the hour (n = the server's samples in the hour), so sums
    // over servers are "average servers online" and "average players" over the hour.
    db.$executeRaw`
      WITH s AS (
        SELECT ss.game_server_id AS id, ss.crawl_id, ss.online, ss.players, COALESCE(ss.bots, 0) AS bots, ss.map,
          g.app_id, g.folder, g.region, g.country, g.protocol,
          count(*) OVER (PARTITION BY ss.game_server_id) AS n
        FROM server_sample ss JOIN game_server g ON g.id = ss.game_server_id
        WHERE ss.crawl_at >= ${hour} AND ss.crawl_at < ${end}
          AND NOT g.suspected_fake AND NOT g.is_relay AND NOT g.hidden
      ), d AS (
        SELECT dim.dimension, dim.key, s.* FROM s CROSS JOIN LATERAL (VALUES
          ('ALL', ''), ('APP', s.app_id::text), ('FOLDER', NULLIF(s.folder, '')), ('MAP', NULLIF(s.map, '')),
          ('REGION', s.region::text), ('COUNTRY', s.country::text), ('PROTOCOL', s.protocol)
        ) AS dim(dimension, key) WHERE dim.key IS NOT NULL
      ), peak AS (
        SELECT dimension, key, max(total)::int AS peak
        FROM (SELECT dimension, key, crawl_id, sum(players) AS total FROM d GROUP BY dimension, key, crawl_id) per_crawl
        GROUP BY dimension, key
      ), agg AS (
        SELECT dimension, key, sum(online::int::real / n) AS servers_online, count(DISTINCT id)::int AS servers_seen,
          sum(players::real / n) AS players_avg, sum(bots::real / n) AS bots_avg
        FROM d GROUP BY dimension, key
      )
      INSERT INTO population_rollup (resolution, dimension, key, bucket_at, servers_online, servers_seen, players_avg, players_peak, bots_avg)
      SELECT 'HOUR', a.dimension::"PopulationDimension", a.key, ${hour}, a.servers_online, a.servers_seen, a.players_avg, p.peak, a.bots_avg
      FROM agg a JOIN peak p ON p.dimension = a.dimension AND p.key = a.key`,
  ], ROLLUP_TX_OPTIONS);
}

/** Daily buckets from the hourly ones: averages over the hours crawled that day, peaks as maxima. */
async function rollupPopulationDay(db: Db, day: Date): Promise<void> {
  const end = new Date(day.getTime() + DAY_MS);
  await db.$transaction([
    db.$executeRaw`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, ${-1 - (Math.floor(day.getTime() / DAY_MS) % 2_000_000_000)})`,
    db.$executeRaw`DELETE FROM population_rollup WHERE resolution = 'DAY' AND bucket_at = ${day}`,
    db.$executeRaw`
      WITH hours AS (
        SELECT GREATEST(count(*), 1)::real AS n FROM population_rollup
        WHERE resolution = 'HOUR' AND dimension = 'ALL' AND bucket_at >= ${day} AND bucket_at < ${end}
      )
      INSERT INTO population_rollup (resolution, dimension, key, bucket_at, servers_online, servers_seen, players_avg, players_peak, bots_avg)
      SELECT 'DAY', p.dimension, p.key, ${day}, sum(p.servers_online) / hours.n, max(p.servers_seen), sum(p.players_avg) / hours.n,
        max(p.players_peak), sum(p.bots_avg) / hours.n
      FROM population_rollup p, hours
      WHERE p.resolution = 'HOUR' AND p.bucket_at >= ${day} AND p.bucket_at < ${end}
      GROUP BY p.dimension, p.key, hours.n`,
  ], ROLLUP_TX_OPTIONS);
}

export type HistoryResolution = 'AUTO' | 'RAW' | 'HOUR' | 'DAY';

export class HistoryRangeError extends Error {
  readonly code = 'BAD_RANGE';
  constructor(message: string) {
    super(message);
    this.name = 'HistoryRangeError';
  }
}

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

export interface HistoryOptions {
  from: Date;
  to: Date;
  resolution: HistoryResolution;
  /** The raw window (config.historyRawDays). */
  rawDays: number;
  now?: Date;
}

/** AUTO: about a few hundred points whatever the range. */
export function resolveResolution(o: HistoryOptions): Exclude<HistoryResolution, 'AUTO'> {
  if (o.to.getTime() <= o.from.getTime()) throw new HistoryRangeError('from must be before to');
  const now = o.now ?? new Date();
  const rawFrom = now.getTime() - o.rawDays * DAY_MS;
  if (o.resolution === 'RAW') {
    if (o.from.getTime() < rawFrom) throw new HistoryRangeError(`RAW history is kept for ${o.rawDays} days: from must be after ${new Date(rawFrom).toISOString()}`);
    return 'RAW';
  }
  if (o.resolution !== 'AUTO') return o.resolution;
  const span = o.to.getTime() - o.from.getTime();
  if (span <= 36 * HOUR_MS && o.from.getTime() >= rawFrom) return 'RAW';
  if (span <= 21 * DAY_MS) return 'HOUR';
  return 'DAY';
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
export async function readServerHistories(db: Db, serverIds: readonly number[], o: HistoryOptions): Promise<{ resolution: Exclude<HistoryResolution, 'AUTO'>; series: Map<number, HistoryPoint[]> }> {
  const resolution = resolveResolution(o);
  const ids = [...new Set(serverIds)];
  const series = new Map<number, HistoryPoint[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return { resolution, series };
  let rows: HistoryRow[];
  if (resolution === 'RAW') {
    rows = await db.$queryRaw<HistoryRow[]>`
      SELECT game_server_id AS id, crawl_at AS at, 1 AS samples, online::int AS online,
        CASE WHEN online THEN players END AS pmin, CASE WHEN online THEN players END AS pmax, players::int AS psum,
        bots AS bmax, max_players, map, ping_ms
      FROM server_sample
      WHERE game_server_id = ANY(${ids}::bigint[]) AND crawl_at >= ${o.from} AND crawl_at < ${o.to}
      ORDER BY game_server_id, crawl_at`;
  } else if (resolution === 'HOUR') {
    rows = await db.$queryRaw<HistoryRow[]>`
      SELECT * FROM (
        SELECT d.game_server_id AS id, (d.day::timestamp + (u.i - 1) * interval '1 hour') AT TIME ZONE 'UTC' AS at,
          u.s::int AS samples, COALESCE(u.o, 0)::int AS online, u.pmin, u.pmax, COALESCE(u.psum, 0) AS psum, u.bmax,
          NULL::int AS max_players, u.m AS map, NULL::int AS ping_ms
        FROM server_day d,
          unnest(d.h_samples, d.h_online, d.h_players_min, d.h_players_max, d.h_players_sum, d.h_bots_max, d.h_map)
            WITH ORDINALITY AS u(s, o, pmin, pmax, psum, bmax, m, i)
        WHERE d.game_server_id = ANY(${ids}::bigint[]) AND d.day >= ${utcDay(o.from)}::date AND d.day <= ${utcDay(o.to)}::date
          AND u.s IS NOT NULL AND u.s > 0
      ) h WHERE h.at >= ${floorHour(o.from)} AND h.at < ${o.to}
      ORDER BY id, at`;
  } else {
    rows = await db.$queryRaw<HistoryRow[]>`
      SELECT game_server_id AS id, day::timestamp AT TIME ZONE 'UTC' AS at, samples, online, players_min AS pmin,
        players_max AS pmax, players_sum AS psum, bots_max AS bmax, NULL::int AS max_players, top_map AS map, NULL::int AS ping_ms
      FROM server_day
      WHERE game_server_id = ANY(${ids}::bigint[]) AND day >= ${utcDay(o.from)}::date AND day < ${o.to}::date + 1 AND samples > 0
        AND day::timestamp AT TIME ZONE 'UTC' < ${o.to}
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
  return { resolution, series };
}

export async function readServerHistory(db: Db, serverId: number, o: HistoryOptions): Promise<{ resolution: Exclude<HistoryResolution, 'AUTO'>; points: HistoryPoint[] }> {
  const { resolution, series } = await readServerHistories(db, [serverId], o);
  return { resolution, points: series.get(serverId) ?? [] };
}

export interface MapSpan {
  map: string;
  from: Date;
  to: Date;
}

/** Which map ran when: consecutive points with the same map merged (RAW in the window, else HOUR/DAY). */
export function mapTimeline(points: readonly HistoryPoint[], stepMs: number): MapSpan[] {
  const spans: MapSpan[] = [];
  for (const p of points) {
    if (p.map === null || p.map === '') continue;
    const last = spans[spans.length - 1];
    const end = new Date(p.at.getTime() + stepMs);
    if (last && last.map === p.map && p.at.getTime() - last.to.getTime() <= stepMs) last.to = end;
    else spans.push({ map: p.map, from: p.at, to: end });
  }
  return spans;
}

export type PopulationDimensionName = 'ALL' | 'APP' | 'FOLDER' | 'MAP' | 'REGION' | 'COUNTRY' | 'PROTOCOL';

export interface PopulationPoint {
  at: Date;
  /** Average servers online over the bucket. */
  serversOnline: number;
  /** Servers with a sample in the bucket (DAY: the largest hourly count). */
  serversSeen: number;
  playersAvg: number;
  /** Most players in any one crawl of the bucket. */
  playersPeak: number;
  botsAvg: number;
}

/** Aggregate series from the rollups only (never raw samples). RAW and AUTO resolve to HOUR or DAY. */
export async function readPopulation(
  db: Db,
  filter: { dimension: PopulationDimensionName; key?: string },
  o: { from: Date; to: Date; resolution: HistoryResolution },
): Promise<{ resolution: 'HOUR' | 'DAY'; points: PopulationPoint[] }> {
  if (o.to.getTime() <= o.from.getTime()) throw new HistoryRangeError('from must be before to');
  const span = o.to.getTime() - o.from.getTime();
  const resolution = o.resolution === 'DAY' || (o.resolution !== 'HOUR' && o.resolution !== 'RAW' && span > 21 * DAY_MS) ? 'DAY' : 'HOUR';
  const from = resolution === 'DAY' ? utcDay(o.from) : floorHour(o.from);
  const key = filter.dimension === 'ALL' ? '' : (filter.key ?? '');
  const rows = await db.$queryRaw<{ at: Date; servers_online: number; servers_seen: number; players_avg: number; players_peak: number; bots_avg: number }[]>`
    SELECT bucket_at AS at, servers_online, servers_seen, players_avg, players_peak, bots_avg FROM population_rollup
    WHERE resolution = ${resolution}::"RollupResolution" AND dimension = ${filter.dimension}::"PopulationDimension" AND key = ${key}
      AND bucket_at >= ${from} AND bucket_at < ${o.to}
    ORDER BY bucket_at`;
  return {
    resolution,
    points: rows.map((r) => ({
      at: r.at,
      serversOnline: Number(r.servers_online),
      serversSeen: Number(r.servers_seen),
      playersAvg: Number(r.players_avg),
      playersPeak: Number(r.players_peak),
      botsAvg: Number(r.bots_avg),
    })),
  };
}

export interface RetentionResult {
  droppedPartitions: string[];
  deletedDays: number;
  deletedBatches: number;
}

/**
 * The retention job: rolls up and drops raw day partitions older than the window, deletes rollups
 * older than `rollupDays` (0 keeps them forever), and forgets query batches of finished crawls.
 */
export async function applyRetention(db: Db, o: { rawDays: number; rollupDays: number; now?: Date }): Promise<RetentionResult> {
  const now = o.now ?? new Date();
  const rawBefore = new Date(utcDay(now).getTime() - o.rawDays * DAY_MS);
  for (const p of await listSamplePartitions(db)) {
    // Re-roll the day before dropping it: a crawl whose finish never ran is still counted.
    if (p.day.getTime() + DAY_MS <= rawBefore.getTime()) await rollupRange(db, p.day, new Date(p.day.getTime() + DAY_MS - 1));
  }
  const droppedPartitions = await dropSamplePartitionsBefore(db, rawBefore);
  let deletedDays = 0;
  if (o.rollupDays > 0) {
    const before = new Date(utcDay(now).getTime() - o.rollupDays * DAY_MS);
    deletedDays = await db.$executeRaw`DELETE FROM server_day WHERE day < ${before}::date`;
    await db.$executeRaw`DELETE FROM population_rollup WHERE bucket_at < ${before}`;
  }
  const deletedBatches = await db.$executeRaw`
    DELETE FROM crawl_batch b USING crawl c WHERE b.crawl_id = c.id AND c.finished_at < ${new Date(now.getTime() - DAY_MS)}`;
  return { droppedPartitions, deletedDays, deletedBatches };
}
