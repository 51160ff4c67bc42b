/**
 * History writes: raw samples (server_sample, one per server per crawl, day partitions kept for the raw
 * window) rolled up into server_day (one row per server per UTC day: day totals + 24 hourly slots in
 * arrays) and population_rollup (hourly and daily aggregates per game, map, region, ...), and the
 * retention that drops what is past its window. Reads are src/history/, shared with the API.
 *
 * Rollups are recomputed from the raw samples of an hour, never added to, so re-rolling an hour (each
 * crawl that finishes re-rolls its hour) gives the same rows. Layout and numbers: docs/storage.md.
 */
import type { Db } from '../../shared/db';
import { DAY_MS, floorHour, HOUR_MS, utcDay } from '../../history/time';
import { dropSamplePartitionsBefore, listSamplePartitions } from './partitions';

/** Advisory lock class of population re-rolls (the key is the hour or day). */
const ROLLUP_LOCK_CLASS = 7_271_007;
/**
 * Rollups wait for each other (advisory locks below) and re-read the hour's samples: Prisma's 5 s default
 * transaction timeout expired under load in the demo.
 */
const ROLLUP_TX_OPTIONS = { timeout: 120_000, maxWait: 30_000 };
/** server_day rows of one day: rolled up by one writer at a time. */
const SERVER_ROLLUP_LOCK_CLASS = 7_271_009;

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

/**
 * One moment is one crawl instant: the start (crawl_at) of a crawl of any source with samples in the hour.
 * At each moment every server seen in the hour counts once, with its latest sample at or before that
 * moment (before its first sample of the hour: that first sample). A key's total at a moment is the sum
 * over the servers whose sample then falls under the key (0 when none does). The bucket's peak, minimum
 * and averages are the maximum, minimum and mean of those totals over the hour's moments, so
 * min <= avg <= peak by construction, and two sources listing different servers add up instead of each
 * being a peak of its own (docs/storage.md, "Population rollups").
 */
async function rollupPopulationHour(db: Db, hour: Date): Promise<void> {
  const end = new Date(hour.getTime() + HOUR_MS);
  await db.$transaction([
    // Two sources finishing in the same hour re-roll it one after the other, not interleaved.
    db.$executeRaw`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, ${Math.floor(hour.getTime() / HOUR_MS) % 2_000_000_000})`,
    db.$executeRaw`DELETE FROM population_rollup WHERE resolution = 'HOUR' AND bucket_at = ${hour}`,
    db.$executeRaw`
      WITH moments AS (
        SELECT t, row_number() OVER (ORDER BY t) AS i
        FROM (SELECT DISTINCT crawl_at AS t FROM server_sample WHERE crawl_at >= ${hour} AND crawl_at < ${end}) x
      ), nm AS (SELECT count(*)::float8 AS n FROM moments
      ), s AS (
        SELECT ss.game_server_id AS id, ss.crawl_at, ss.online, ss.players, COALESCE(ss.bots, 0) AS bots, ss.map,
          g.app_id, g.folder, g.region, g.country, g.protocol,
          row_number() OVER w = 1 AS first, lead(ss.crawl_at) OVER w AS until_at
        FROM server_sample ss JOIN game_server g ON g.id = ss.game_server_id
        WHERE ss.crawl_at >= ${hour} AND ss.crawl_at < ${end}
          AND NOT g.suspected_fake AND NOT g.is_relay AND NOT g.hidden
        WINDOW w AS (PARTITION BY ss.game_server_id ORDER BY ss.crawl_at, ss.crawl_id)
      ), covered AS (
        -- The moments a sample stands for: from its crawl (the server's first of the hour: from the first
        -- moment) until the server's next sample. Two samples of one instant (two sources' crawls started
        -- together): the later crawl's stands, the other covers none.
        SELECT s.*, c.i FROM s
          JOIN moments m0 ON m0.t = s.crawl_at
          LEFT JOIN moments m1 ON m1.t = s.until_at
          CROSS JOIN LATERAL generate_series(CASE WHEN s.first THEN 1 ELSE m0.i END, COALESCE(m1.i, (SELECT count(*) FROM moments) + 1) - 1) AS c(i)
      ), combos AS (
        -- Summed per moment and attribute combination first: far fewer rows to spread over the dimensions.
        SELECT i, app_id, folder, map, region, country, protocol,
          sum(players) AS players, count(*) FILTER (WHERE online) AS online, sum(bots) AS bots
        FROM covered GROUP BY i, app_id, folder, map, region, country, protocol
      ), per_moment AS (
        SELECT dim.dimension, dim.key, c.i, sum(c.players) AS players, sum(c.online) AS online, sum(c.bots) AS bots
        FROM combos c CROSS JOIN LATERAL (VALUES
          ('ALL', ''), ('APP', c.app_id::text), ('FOLDER', NULLIF(c.folder, '')), ('MAP', NULLIF(c.map, '')),
          ('REGION', c.region::text), ('COUNTRY', c.country::text), ('PROTOCOL', c.protocol)
        ) AS dim(dimension, key) WHERE dim.key IS NOT NULL
        GROUP BY dim.dimension, dim.key, c.i
      ), agg AS (
        -- Moments without a row had 0 of the key: they count in the means, and make the minimum 0.
        SELECT dimension, key, sum(online) / nm.n AS servers_online, sum(players) / nm.n AS players_avg,
          max(players)::int AS peak, (CASE WHEN count(*) < nm.n THEN 0 ELSE min(players) END)::int AS low,
          sum(bots) / nm.n AS bots_avg
        FROM per_moment, nm GROUP BY dimension, key, nm.n
      ), seen AS (
        SELECT dim.dimension, dim.key, count(DISTINCT x.id)::int AS servers_seen
        FROM (SELECT DISTINCT id, app_id, folder, map, region, country, protocol FROM s) x CROSS JOIN LATERAL (VALUES
          ('ALL', ''), ('APP', x.app_id::text), ('FOLDER', NULLIF(x.folder, '')), ('MAP', NULLIF(x.map, '')),
          ('REGION', x.region::text), ('COUNTRY', x.country::text), ('PROTOCOL', x.protocol)
        ) AS dim(dimension, key) WHERE dim.key IS NOT NULL
        GROUP BY dim.dimension, dim.key
      )
      INSERT INTO population_rollup (resolution, dimension, key, bucket_at, servers_online, servers_seen, players_avg, players_peak, players_min, bots_avg)
      SELECT 'HOUR', a.dimension::"PopulationDimension", a.key, ${hour}, a.servers_online, s.servers_seen, a.players_avg, a.peak, a.low, a.bots_avg
      FROM agg a JOIN seen s ON s.dimension = a.dimension AND s.key = a.key`,
  ], ROLLUP_TX_OPTIONS);
}

/**
 * Daily buckets from the hourly ones: averages are means over the hours crawled that day (an hour without
 * the key counts as 0), the peak the largest hourly peak, the minimum the smallest hourly one (0 when the
 * key was missing from an hour crawled).
 */
async function rollupPopulationDay(db: Db, day: Date): Promise<void> {
  const end = new Date(day.getTime() + DAY_MS);
  await db.$transaction([
    db.$executeRaw`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, ${-1 - (Math.floor(day.getTime() / DAY_MS) % 2_000_000_000)})`,
    db.$executeRaw`DELETE FROM population_rollup WHERE resolution = 'DAY' AND bucket_at = ${day}`,
    db.$executeRaw`
      WITH hours AS (
        SELECT GREATEST(count(*), 1)::float8 AS n FROM population_rollup
        WHERE resolution = 'HOUR' AND dimension = 'ALL' AND bucket_at >= ${day} AND bucket_at < ${end}
      )
      INSERT INTO population_rollup (resolution, dimension, key, bucket_at, servers_online, servers_seen, players_avg, players_peak, players_min, bots_avg)
      SELECT 'DAY', p.dimension, p.key, ${day}, sum(p.servers_online::float8) / hours.n, max(p.servers_seen),
        sum(p.players_avg::float8) / hours.n, max(p.players_peak),
        CASE WHEN count(*) < hours.n THEN 0 ELSE min(p.players_min) END, sum(p.bots_avg::float8) / hours.n
      FROM population_rollup p, hours
      WHERE p.resolution = 'HOUR' AND p.bucket_at >= ${day} AND p.bucket_at < ${end}
      GROUP BY p.dimension, p.key, hours.n`,
  ], ROLLUP_TX_OPTIONS);
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
