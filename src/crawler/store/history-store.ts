/**
 * History writes: raw samples (one per server per crawl, written into hour partitions and compacted into
 * one row per server per day, kept for the raw window; read through server_sample_range) rolled up into server_day (one row per server per UTC day: day totals + 24 hourly slots in
 * arrays) and population_rollup (hourly and daily aggregates per game, map, region, ...), and the
 * retention that drops what is past its window. Reads are src/history/, shared with the API.
 *
 * Rollups are recomputed from the raw samples of an hour, never added to, so re-rolling an hour (each
 * crawl that finishes re-rolls its hour) gives the same rows; server_day's day totals follow the hour's slot by
 * difference, equal to recomputing them from the 24 slots. Layout and numbers: docs/storage.md.
 */
import { Prisma } from "../../generated/prisma/client";
import type { Db } from "../../shared/db";
import { DAY_MS, floorHour, HOUR_MS, utcDay } from "../../history/time";
import {
  dropSamplePartitionsBefore,
  ensureSampleDayPartition,
  forgetSamplePartition,
  listSamplePartitions,
  PARTITION_LOCK_KEY,
} from "./partitions";
import { compactServerDays } from "./day-compaction";
import { totalFromSlots, type ServerDayTotal } from "./server-day-totals";

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
  for (const d of days) await rollupPopulationDay(db, new Date(d));
}

/**
 * A server_day hourly array after the upsert below: its `slot` (1-24) replaced by the hour's value, for the totals
 * a difference cannot give. Slices keep the arrays' positions aligned with each other.
 */
function slotSet(column: string, slot: number): string {
  return `(d.${column}[1:${slot - 1}] || EXCLUDED.${column}[${slot}] || d.${column}[${slot + 1}:24])`;
}

/**
 * The day totals after the hour's slot `slot` is replaced, from the row's totals and the slot's old (`d.`) and new
 * (`EXCLUDED.`) values: sums by difference; an extreme by LEAST / GREATEST unless the old slot held it and the new
 * value moved away from it; the top map kept unless its own slot lost online samples or moved to another map. Only
 * those cases recompute from the 24 slots (server-day-totals.ts). Exact while every row's totals equal its slots,
 * which holds because this upsert is the only writer of server_day's slots and totals (day-compaction.ts moves rows
 * whole) and is serialised per day. Recomputing every total from the slots was half of this statement's time.
 */
function totalsAfterSlot(slot: number): string {
  const was = (c: string): string => `d.${c}[${slot}]`;
  const now = (c: string): string => `EXCLUDED.${c}[${slot}]`;
  const recompute = (t: ServerDayTotal): string => totalFromSlots(t, (c) => slotSet(c, slot));
  const sum = (t: ServerDayTotal, c: string): string =>
    `${t} = d.${t} - COALESCE(${was(c)}, 0) + COALESCE(${now(c)}, 0)`;
  const extreme = (t: ServerDayTotal, c: string, kind: "min" | "max"): string => {
    const [beyond, toward, pick] = kind === "min" ? [">", "<=", "LEAST"] : ["<", ">=", "GREATEST"];
    return `${t} = CASE WHEN ${was(c)} IS NULL OR ${was(c)} ${beyond} d.${t} OR ${now(c)} ${toward} ${was(c)}
        THEN ${pick}(d.${t}, ${now(c)}) ELSE ${recompute(t)} END`;
  };
  return [
    sum("samples", "h_samples"),
    sum("online", "h_online"),
    extreme("players_min", "h_players_min", "min"),
    extreme("players_max", "h_players_max", "max"),
    sum("players_sum", "h_players_sum"),
    extreme("bots_max", "h_bots_max", "max"),
    // The top map has the most online samples over the slots with a map. It stays when the slot adds to it (its new
    // map is the top map and it was another's or has no fewer online) or leaves it alone (no map now, another before).
    `top_map = CASE WHEN d.top_map IS NULL THEN ${now("h_map")}
        WHEN ${now("h_map")} = d.top_map AND (${was("h_map")} IS DISTINCT FROM d.top_map OR ${now("h_online")} >= ${was("h_online")})
          OR ${now("h_map")} IS NULL AND ${was("h_map")} IS DISTINCT FROM d.top_map THEN d.top_map
        ELSE ${recompute("top_map")} END`,
  ].join(",\n      ");
}

async function rollupServerHour(db: Db, hour: Date): Promise<void> {
  const end = new Date(hour.getTime() + HOUR_MS);
  const day = utcDay(hour);
  const slot = hour.getUTCHours() + 1;
  // Arrays are 24 slots: the hour's value at `slot`, NULL elsewhere; on conflict only `slot` is set.
  // Two crawls finishing together roll the hour up one after the other: interleaved, the two upserts
  // over the same server_day rows deadlocked (40P01).
  await db.$transaction(
    [
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
      FROM server_sample_range(${hour}::timestamptz, ${end}::timestamptz)
      GROUP BY game_server_id
    ), pad AS (SELECT ${slot}::int - 1 AS before, 24 - ${slot}::int AS after)
    INSERT INTO server_day AS d (game_server_id, day, samples, online, players_min, players_max, players_sum, bots_max, top_map,
      h_samples, h_online, h_players_min, h_players_max, h_players_sum, h_bots_max, h_map)
    SELECT h.id, ${day}::date, LEAST(h.samples, 32767), LEAST(h.online, 32767), h.pmin, h.pmax, COALESCE(h.psum, 0), h.bmax, h.top_map,
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
      h_map[${slot}::int] = EXCLUDED.h_map[${slot}::int],
      ${Prisma.raw(totalsAfterSlot(slot))}`,
    ],
    ROLLUP_TX_OPTIONS,
  );
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
  await db.$transaction(
    [
      // Two sources finishing in the same hour re-roll it one after the other, not interleaved.
      db.$executeRaw`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, ${Math.floor(hour.getTime() / HOUR_MS) % 2_000_000_000})`,
      // Planned at a cost far past jit_above_cost, the statement below spent about a second compiling each time
      // and ran no faster for it (docs/BENCHMARKS-history.md, 2026-12-06).
      db.$executeRaw`SET LOCAL jit = off`,
      db.$executeRaw`DELETE FROM population_rollup WHERE resolution = 'HOUR' AND bucket_at = ${hour}`,
      db.$executeRaw`
      WITH moments AS (
        SELECT t, row_number() OVER (ORDER BY t) AS i
        FROM (SELECT DISTINCT crawl_at AS t FROM server_sample_range(${hour}::timestamptz, ${end}::timestamptz)) x
      ), nm AS (SELECT count(*)::float8 AS n FROM moments
      ), s AS (
        SELECT ss.game_server_id AS id, ss.crawl_at, ss.online, ss.players, COALESCE(ss.bots, 0) AS bots, ss.map,
          g.app_id, g.folder, g.region, g.country, g.protocol, g.suspected_fake AS fake,
          row_number() OVER w = 1 AS first, lead(ss.crawl_at) OVER w AS until_at
        FROM server_sample_range(${hour}::timestamptz, ${end}::timestamptz) ss JOIN game_server g ON g.id = ss.game_server_id
        WHERE NOT g.is_relay AND NOT g.hidden
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
        SELECT i, app_id, folder, map, region, country, protocol, fake,
          sum(players) AS players, count(*) FILTER (WHERE online) AS online, sum(bots) AS bots
        FROM covered GROUP BY i, app_id, folder, map, region, country, protocol, fake
      ), per_moment AS (
        -- Per key and moment: without suspected fakes (h_*, has_h: the key had such a server then) and with them (a_*).
        SELECT dim.dimension, dim.key, c.i,
          sum(c.players) FILTER (WHERE NOT c.fake) AS h_players, sum(c.online) FILTER (WHERE NOT c.fake) AS h_online,
          sum(c.bots) FILTER (WHERE NOT c.fake) AS h_bots, bool_or(NOT c.fake) AS has_h, bool_or(c.fake) AS has_fake,
          sum(c.players) AS a_players, sum(c.online) AS a_online, sum(c.bots) AS a_bots
        FROM combos c CROSS JOIN LATERAL (VALUES
          ('ALL', ''), ('APP', c.app_id::text), ('FOLDER', NULLIF(c.folder, '')), ('MAP', NULLIF(c.map, '')),
          ('REGION', c.region::text), ('COUNTRY', c.country::text), ('PROTOCOL', c.protocol)
        ) AS dim(dimension, key) WHERE dim.key IS NOT NULL
        GROUP BY dim.dimension, dim.key, c.i
      ), agg AS (
        -- Moments without the key had 0 of it: they count in the means, and make the minimum 0.
        SELECT dimension, key,
          count(*) FILTER (WHERE has_h) AS h_moments,
          COALESCE(sum(h_online), 0) / nm.n AS h_servers_online, COALESCE(sum(h_players), 0) / nm.n AS h_players_avg,
          COALESCE(max(h_players), 0)::int AS h_peak,
          (CASE WHEN count(*) FILTER (WHERE has_h) < nm.n THEN 0 ELSE min(h_players) END)::int AS h_low,
          COALESCE(sum(h_bots), 0) / nm.n AS h_bots_avg,
          bool_or(has_fake) AS has_fake,
          sum(a_online) / nm.n AS a_servers_online, sum(a_players) / nm.n AS a_players_avg, max(a_players)::int AS a_peak,
          (CASE WHEN count(*) < nm.n THEN 0 ELSE min(a_players) END)::int AS a_low, sum(a_bots) / nm.n AS a_bots_avg
        FROM per_moment, nm GROUP BY dimension, key, nm.n
      ), seen AS (
        -- Distinct servers per key, without count(DISTINCT) over every sample: a server's attributes but its map are
        -- game_server's, the same in each of its samples, so its first sample counts it once; per map, each of the
        -- hour's (server, map) pairs once.
        SELECT dim.dimension, dim.key, count(*) FILTER (WHERE NOT x.fake)::int AS h_seen, count(*)::int AS a_seen
        FROM (SELECT app_id, folder, region, country, protocol, fake FROM s WHERE first) x CROSS JOIN LATERAL (VALUES
          ('ALL', ''), ('APP', x.app_id::text), ('FOLDER', NULLIF(x.folder, '')),
          ('REGION', x.region::text), ('COUNTRY', x.country::text), ('PROTOCOL', x.protocol)
        ) AS dim(dimension, key) WHERE dim.key IS NOT NULL
        GROUP BY dim.dimension, dim.key
        UNION ALL
        SELECT 'MAP', m.map, count(*) FILTER (WHERE NOT m.fake)::int, count(*)::int
        FROM (SELECT DISTINCT id, map, fake FROM s WHERE map <> '') m GROUP BY m.map
      )
      INSERT INTO population_rollup (resolution, dimension, key, with_suspected_fakes, bucket_at, servers_online, servers_seen, players_avg, players_peak, players_min, bots_avg)
      SELECT 'HOUR'::"RollupResolution", a.dimension::"PopulationDimension", a.key, false, ${hour}::timestamptz, a.h_servers_online, s.h_seen, a.h_players_avg, a.h_peak, a.h_low, a.h_bots_avg
      FROM agg a JOIN seen s ON s.dimension = a.dimension AND s.key = a.key WHERE a.h_moments > 0
      UNION ALL
      -- Counted with suspected fakes: only where they changed the bucket. A fake's sample that covers no moment
      -- (a later crawl of the same instant stands) still counts it as seen under its map.
      SELECT 'HOUR'::"RollupResolution", a.dimension::"PopulationDimension", a.key, true, ${hour}::timestamptz, a.a_servers_online, s.a_seen, a.a_players_avg, a.a_peak, a.a_low, a.a_bots_avg
      FROM agg a JOIN seen s ON s.dimension = a.dimension AND s.key = a.key WHERE a.has_fake OR s.a_seen > s.h_seen`,
    ],
    ROLLUP_TX_OPTIONS,
  );
}

/**
 * Daily buckets from the hourly ones: averages are means over the hours crawled that day (an hour without
 * the key counts as 0), the peak the largest hourly peak, the minimum the smallest hourly one (0 when the
 * key was missing from an hour crawled).
 */
async function rollupPopulationDay(db: Db, day: Date): Promise<void> {
  const end = new Date(day.getTime() + DAY_MS);
  await db.$transaction(
    [
      db.$executeRaw`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, ${-1 - (Math.floor(day.getTime() / DAY_MS) % 2_000_000_000)})`,
      db.$executeRaw`DELETE FROM population_rollup WHERE resolution = 'DAY' AND bucket_at = ${day}`,
      db.$executeRaw`
      WITH hours AS (
        SELECT GREATEST(count(DISTINCT bucket_at), 1)::float8 AS n FROM population_rollup
        WHERE resolution = 'HOUR' AND dimension = 'ALL' AND bucket_at >= ${day} AND bucket_at < ${end}
      ), variants AS (
        -- Without suspected fakes: the false rows. With them: per hour, the true row where there is one, else the false row.
        SELECT false AS with_fakes, p.* FROM population_rollup p
        WHERE p.resolution = 'HOUR' AND NOT p.with_suspected_fakes AND p.bucket_at >= ${day} AND p.bucket_at < ${end}
        UNION ALL
        SELECT true, e.* FROM (
          SELECT DISTINCT ON (p.dimension, p.key, p.bucket_at) p.* FROM population_rollup p
          WHERE p.resolution = 'HOUR' AND p.bucket_at >= ${day} AND p.bucket_at < ${end}
            AND EXISTS (SELECT 1 FROM population_rollup f WHERE f.resolution = 'HOUR' AND f.with_suspected_fakes
              AND f.dimension = p.dimension AND f.key = p.key AND f.bucket_at >= ${day} AND f.bucket_at < ${end})
          ORDER BY p.dimension, p.key, p.bucket_at, p.with_suspected_fakes DESC) e
      )
      INSERT INTO population_rollup (resolution, dimension, key, with_suspected_fakes, bucket_at, servers_online, servers_seen, players_avg, players_peak, players_min, bots_avg)
      SELECT 'DAY', p.dimension, p.key, p.with_fakes, ${day}, sum(p.servers_online::float8) / hours.n, max(p.servers_seen),
        sum(p.players_avg::float8) / hours.n, max(p.players_peak),
        CASE WHEN count(*) < hours.n THEN 0 ELSE min(p.players_min) END, sum(p.bots_avg::float8) / hours.n
      FROM variants p, hours
      GROUP BY p.dimension, p.key, p.with_fakes, hours.n`,
    ],
    ROLLUP_TX_OPTIONS,
  );
}

/** A compaction waits for writers of the hour and holds them off while it runs: longer than Prisma's 5 s. */
const COMPACT_TX_OPTIONS = { timeout: 600_000, maxWait: 60_000 };

/**
 * Appends samples to their server's day rows (server_sample_day): `source` is a relation with
 * server_sample's columns, all of one UTC day or more. Arrays grow by the source's samples in time
 * order; until_at only grows.
 */
export function appendToDaysSql(source: string): string {
  const by = "ORDER BY s.crawl_at, s.crawl_id";
  return `
    INSERT INTO server_sample_day AS d (game_server_id, day, until_at, at_ms, crawl_id, online, players, bots, max_players, map, ping_ms)
    SELECT s.game_server_id, s.day, max(s.crawl_at), array_agg(s.at_ms ${by}), array_agg(s.crawl_id ${by}),
      array_agg(s.online ${by}), array_agg(s.players ${by}), array_agg(s.bots ${by}), array_agg(s.max_players ${by}),
      array_agg(s.map ${by}), array_agg(s.ping_ms ${by})
    FROM (
      SELECT r.*, (r.crawl_at AT TIME ZONE 'UTC')::date AS day,
        (extract(epoch FROM r.crawl_at - ((r.crawl_at AT TIME ZONE 'UTC')::date::timestamp AT TIME ZONE 'UTC')) * 1000)::int AS at_ms
      FROM ${source} r
    ) s
    GROUP BY s.game_server_id, s.day
    ON CONFLICT (game_server_id, day) DO UPDATE SET
      until_at = GREATEST(d.until_at, EXCLUDED.until_at), at_ms = d.at_ms || EXCLUDED.at_ms,
      crawl_id = d.crawl_id || EXCLUDED.crawl_id, online = d.online || EXCLUDED.online,
      players = d.players || EXCLUDED.players, bots = d.bots || EXCLUDED.bots,
      max_players = d.max_players || EXCLUDED.max_players, map = d.map || EXCLUDED.map, ping_ms = d.ping_ms || EXCLUDED.ping_ms`;
}

/**
 * Compacts every raw hour that ended on or before `before` into the day rows and drops its partition, and
 * the DEFAULT partition's rows before it (samples of hours compacted already). Each hour is one transaction
 * that holds sample writes off (SHARE ROW EXCLUSIVE on server_sample: reads go on) so that no row
 * lands in the partition between its copy and its drop; a writer that waited writes into the DEFAULT
 * partition, and the compacted day row makes a retried sample of the hour a no-op (sample-store.ts).
 * Returns the partitions compacted.
 */
export async function compactSamples(db: Db, before: Date): Promise<string[]> {
  const compacted: string[] = [];
  for (const p of await listSamplePartitions(db)) {
    if (p.compacted || p.to.getTime() > before.getTime()) continue;
    await ensureSampleDayPartition(db, p.from);
    await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`;
      await tx.$executeRawUnsafe("LOCK TABLE server_sample IN SHARE ROW EXCLUSIVE MODE");
      // The name comes from the catalogue and matched the partition pattern.
      await tx.$executeRawUnsafe(appendToDaysSql(`"${p.name}"`));
      await tx.$executeRawUnsafe(`DROP TABLE "${p.name}"`);
    }, COMPACT_TX_OPTIONS);
    forgetSamplePartition(db, p.name);
    compacted.push(p.name);
  }
  const late = await db.$queryRaw<{ day: Date }[]>`
    SELECT DISTINCT (crawl_at AT TIME ZONE 'UTC')::date::timestamp AT TIME ZONE 'UTC' AS day
    FROM server_sample_default WHERE crawl_at < ${before}`;
  if (late.length > 0) {
    for (const r of late) await ensureSampleDayPartition(db, r.day);
    await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`;
      await tx.$executeRawUnsafe("LOCK TABLE server_sample IN SHARE ROW EXCLUSIVE MODE");
      await tx.$executeRawUnsafe(
        `WITH moved AS (DELETE FROM server_sample_default WHERE crawl_at < '${before.toISOString()}' RETURNING *) ${appendToDaysSql("moved")}`,
      );
    }, COMPACT_TX_OPTIONS);
  }
  return compacted;
}

/** How long after its end an hour of raw samples is compacted. */
const COMPACT_AFTER_MS = HOUR_MS;

export interface RetentionResult {
  droppedPartitions: string[];
  /** server_day rows moved into their month rows (server_day_month, day-compaction.ts). */
  compactedDays: number;
  /** Raw hours compacted into day rows (their partitions are gone too). */
  compactedPartitions: string[];
  deletedDays: number;
  deletedBatches: number;
}

/**
 * The retention job: rolls up and drops raw day partitions older than the window, deletes rollups
 * older than `rollupDays` (0 keeps them forever), and forgets query batches of finished crawls.
 */
export async function applyRetention(
  db: Db,
  o: { rawDays: number; rollupDays: number; now?: Date },
): Promise<RetentionResult> {
  const now = o.now ?? new Date();
  const rawBefore = new Date(utcDay(now).getTime() - o.rawDays * DAY_MS);
  // Re-roll each day before dropping it: a crawl whose finish never ran is still counted.
  const days = new Set<number>();
  for (const p of await listSamplePartitions(db))
    if (p.day.getTime() + DAY_MS <= rawBefore.getTime()) days.add(p.day.getTime());
  const late = await db.$queryRaw<{ day: Date }[]>`
    SELECT DISTINCT (crawl_at AT TIME ZONE 'UTC')::date::timestamp AT TIME ZONE 'UTC' AS day
    FROM server_sample_default WHERE crawl_at < ${rawBefore}`;
  for (const r of late) days.add(r.day.getTime());
  for (const d of [...days].sort((x, y) => x - y))
    await rollupRange(db, new Date(d), new Date(d + DAY_MS - 1));
  const droppedPartitions = await dropSamplePartitionsBefore(db, rawBefore);
  // Days whose raw samples are gone are final: into one row per server per month, which TOAST compresses.
  const { movedDays: compactedDays } = await compactServerDays(db, rawBefore);
  // Hours inside the window: compacted once every crawl started in them is likely done writing (a sample
  // written later still counts, through the DEFAULT partition).
  const compactedPartitions = await compactSamples(
    db,
    new Date(floorHour(now).getTime() - COMPACT_AFTER_MS),
  );
  let deletedDays = 0;
  if (o.rollupDays > 0) {
    const before = new Date(utcDay(now).getTime() - o.rollupDays * DAY_MS);
    deletedDays = await db.$executeRaw`DELETE FROM server_day WHERE day < ${before}::date`;
    // Month rows go whole, once their last day is past: a month's days outlive the limit by up to a month.
    await db.$executeRaw`DELETE FROM server_day_month WHERE month < date_trunc('month', ${before}::date)::date`;
    await db.$executeRaw`DELETE FROM population_rollup WHERE bucket_at < ${before}`;
  }
  const deletedBatches = await db.$executeRaw`
    DELETE FROM crawl_batch b USING crawl c WHERE b.crawl_id = c.id AND c.finished_at < ${new Date(now.getTime() - DAY_MS)}`;
  return { droppedPartitions, compactedDays, compactedPartitions, deletedDays, deletedBatches };
}
