/**
 * Generates an index with history directly in the storage layout (docs/storage.md, history-store.ts),
 * in bulk with generate_series, as if a crawl had run every 5 minutes for `days` days:
 * - game_server: the current state of every server (players, rules);
 * - crawl: one row per 5-minute crawl;
 * - raw samples for the raw window (HISTORY_RAW_DAYS), for `rawServers` servers: each day written as the
 *   crawler writes them (one row per sample in server_sample), measured for the first day (the layout
 *   before migration 20261124140000_raw_sample_day), then compacted by the retention job's statement into
 *   server_sample_day (one row per server per day) and dropped;
 * - server days: one server_day row per server per day with the 24 hourly slots, written day by day;
 *   each day leaving the raw window moved into server_day_month (one row per server per month) by the
 *   retention job's statements (day-compaction.ts), as the hourly retention job does;
 * - population_rollup: HOUR and DAY buckets per dimension key (ALL, APP, FOLDER, MAP, REGION, PROTOCOL).
 * The history ends at 00:00 UTC today, so "the last 30 days" is all history.
 */
import type { Client } from "pg";
import { totalBytes } from "../lib/bench-db";
import { SIM_GAMES } from "../../src/simulator/games";
import { appendToDaysSql } from "../../src/crawler/store/history-store";
import { dayPartitionName } from "../../src/crawler/store/partitions";
import { DROP_STRAY_DAYS_SQL, MOVE_SERVER_DAYS_SQL } from "../../src/crawler/store/day-compaction";

export const SAMPLES_PER_DAY = 288;
const DAY_MS = 24 * 3600 * 1000;
/** Servers per compaction transaction, as src/crawler/store/day-compaction.ts (SERVERS_PER_CHUNK). */
const DAY_CHUNK = 5_000n;

/** One retention run's move of the day leaving the raw window into the month rows. */
export interface DayCompaction {
  /** The first day not moved (the raw window's start). */
  day: string;
  moved: number;
  ms: number;
}

export interface GenerateOptions {
  servers: number;
  days: number;
  rawDays: number;
  rawServers: number;
  log: (line: string) => void;
}

export interface GenerateTimings {
  serversMs: number;
  crawlsMs: number;
  rawMs: number;
  /** Of rawMs: compacting the rows into day rows. */
  compactMs: number;
  daysMs: number;
  populationMs: number;
}

export interface Generated {
  endAt: Date;
  timings: GenerateTimings;
  rawRows: number;
  dayRows: number;
  populationRows: number;
  rawPartitions: string[];
  /** The first raw day as one row per sample (server_sample), before compaction: bytes and rows. */
  rowLayoutBytes: number;
  rowLayoutRows: number;
  /** The first raw-window days as server_day rows, before any was compacted: bytes and rows. */
  dayLayoutBytes: number;
  dayLayoutRows: number;
  dayCompactions: DayCompaction[];
}

async function timed(body: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await body();
  return performance.now() - started;
}

/** Games weighted like the simulated fleet, as SQL rows. */
function gamesJson(): string {
  const rows: Array<{
    folder: string;
    game: string;
    app_id: number;
    maps: readonly string[];
    max_players: readonly number[];
    version: string;
    tags: readonly string[];
  }> = [];
  for (const g of SIM_GAMES)
    for (let w = 0; w < g.weight; w++)
      rows.push({
        folder: g.folder,
        game: g.game,
        app_id: g.appId,
        maps: g.maps,
        max_players: g.maxPlayers,
        version: g.version,
        tags: g.tags,
      });
  return JSON.stringify(rows);
}

export async function generateHistory(c: Client, o: GenerateOptions): Promise<Generated> {
  const endAt = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
  const startAt = new Date(endAt.getTime() - o.days * DAY_MS);
  await c.query("SET synchronous_commit = off");
  await c.query(
    "INSERT INTO master_source (name, kind, host, port, updated_at) VALUES ('bench-master', 'VALVE_UDP', '127.0.0.1', 27011, now())",
  );

  o.log(`storage: ${o.servers} servers`);
  const serversMs = await timed(async () => {
    await c.query(
      "CREATE TEMP TABLE bench_game AS SELECT (row_number() OVER ()) - 1 AS n, * FROM jsonb_to_recordset($1::jsonb) AS x(folder text, game text, app_id int, maps text[], max_players int[], version text, tags text[])",
      [gamesJson()],
    );
    await c.query(
      `INSERT INTO game_server (address, ip, query_port, game_port, protocol, region, status, source_id, name, map, folder, game, app_id,
         players, max_players, bots, password_protected, vac_secured, dedicated, server_type, os, version, keywords, steam_id,
         ping_ms, player_list, rules, player_names, first_seen_at, last_listed_at, last_queried_at, last_answered_at, updated_at)
       SELECT host(s.ip), s.ip, s.port, s.port, 'source', (ARRAY[0,1,2,3,4,5,6,7,255])[1 + i % 9], 'ONLINE', 1,
         (ARRAY['[EU]','[US]','[RU]','[AU]','[DE]'])[1 + i % 5] || ' ' || (ARRAY['Skill Zone','Bunker','Frag House','Old School','Chill Town','Pro Arena'])[1 + (i / 5) % 6] || ' ' || g.game || ' #' || i,
         g.maps[1 + (i / 3) % cardinality(g.maps)], g.folder, g.game, g.app_id,
         p.players, p.max_players, CASE WHEN i % 5 = 0 THEN 2 ELSE 0 END, i % 10 = 0, i % 7 <> 0, true, 'd', 'l', g.version, g.tags,
         (90000000000000000 + i)::text, 10 + i % 190,
         COALESCE((SELECT jsonb_agg(jsonb_build_object('name', 'Player' || j || '_' || i % 977, 'score', (j * 7 + i) % 90, 'durationSeconds', (j * 613 + i) % 20000)) FROM generate_series(1, p.players) j), '[]'),
         (SELECT jsonb_agg(jsonb_build_object('name', r.name, 'value', r.value)) FROM (VALUES ('mp_friendlyfire', (i % 2)::text), ('mp_timelimit', '30'), ('sv_gravity', '800'), ('sv_cheats', '0'), ('sv_password', '0'), ('sv_tags', array_to_string(g.tags, ','))) AS r(name, value)),
         COALESCE((SELECT string_agg('Player' || j || '_' || i % 977, E'\\n') FROM generate_series(1, p.players) j), ''),
         $2::timestamptz, now(), now(), now(), now()
       FROM generate_series(1, $1::int) AS i
       CROSS JOIN LATERAL (SELECT ('127.100.0.0'::inet + (i / 100)) AS ip, 27015 + i % 100 AS port) s
       JOIN bench_game g ON g.n = (i::bigint * 7919) % (SELECT count(*) FROM bench_game)
       CROSS JOIN LATERAL (SELECT g.max_players[1 + i % cardinality(g.max_players)] AS max_players) mp
       CROSS JOIN LATERAL (SELECT LEAST(mp.max_players, CASE WHEN i % 3 = 0 THEN 0 ELSE (i * 37) % (mp.max_players + 1) END) AS players, mp.max_players) p`,
      [o.servers, startAt],
    );
  });

  o.log(`storage: ${o.days * SAMPLES_PER_DAY} crawls`);
  const crawlsMs = await timed(async () => {
    await c.query(
      `INSERT INTO crawl (key, source_id, started_at, finished_at, listed, queried, answered, failed, written)
       SELECT 'bench-' || to_char(t AT TIME ZONE 'UTC', 'YYYYMMDDHH24MI'), 1,
         -- A scheduled crawl starts a few ms to seconds late, not on the minute: crawl_at is kept to the ms.
         t + (extract(epoch FROM t)::bigint * 7919 % 3000) * interval '1 millisecond', t + interval '40 seconds', $3::int, $3::int, ($3::int * 0.95)::int, ($3::int * 0.05)::int, $3::int
       FROM generate_series($1::timestamptz, $2::timestamptz - interval '5 minutes', interval '5 minutes') AS t`,
      [startAt, endAt, o.servers],
    );
  });

  // Raw window: the last rawDays days, written one sample per server per crawl as the crawler writes them
  // (here a whole day in one partition), then compacted into day rows as the retention job does each hour.
  const rawPartitions: string[] = [];
  let rawRows = 0;
  let rowLayoutBytes = 0;
  let rowLayoutRows = 0;
  let compactMs = 0;
  const rawMs = await timed(async () => {
    // Generated rows are consistent by construction: skip the per-row foreign-key triggers (the
    // crawler's inserts pay them; this part measures sizes, and an hour-long run has no time for them).
    await c.query("SET session_replication_role = replica");
    for (let d = o.rawDays; d >= 1; d--) {
      const day = new Date(endAt.getTime() - d * DAY_MS);
      const rows = `server_sample_p${day.toISOString().slice(0, 10).replace(/-/g, "")}`;
      const dayEnd = new Date(day.getTime() + DAY_MS).toISOString();
      await c.query(
        `CREATE TABLE "${rows}" PARTITION OF server_sample FOR VALUES FROM ('${day.toISOString()}') TO ('${dayEnd}')`,
      );
      const r = await c.query(
        `INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms)
         SELECT g.id, c.started_at, c.id, on_.online,
           CASE WHEN on_.online THEN LEAST(g.max_players, GREATEST(0, g.players + ((c.id + g.id) % 7) - 3)) ELSE 0 END,
           CASE WHEN on_.online THEN g.bots END, g.max_players, CASE WHEN on_.online THEN g.map END,
           CASE WHEN on_.online THEN g.ping_ms + (c.id % 5) END
         FROM crawl c CROSS JOIN game_server g
         CROSS JOIN LATERAL (SELECT ((c.id * 31 + g.id * 17) % 20) <> 0 AS online) on_
         WHERE c.started_at >= $1 AND c.started_at < $2 AND g.id <= $3`,
        [day, new Date(day.getTime() + DAY_MS), o.rawServers],
      );
      rawRows += r.rowCount ?? 0;
      if (d === o.rawDays) {
        rowLayoutBytes = await totalBytes(c, [rows]);
        rowLayoutRows = r.rowCount ?? 0;
      }
      const name = dayPartitionName(day);
      rawPartitions.push(name);
      compactMs += await timed(async () => {
        await c.query(
          `CREATE TABLE "${name}" PARTITION OF server_sample_day FOR VALUES FROM ('${day.toISOString().slice(0, 10)}') TO ('${dayEnd.slice(0, 10)}')`,
        );
        await c.query(appendToDaysSql(`"${rows}"`));
        await c.query(`DROP TABLE "${rows}"`);
      });
      o.log(`storage: raw ${name}: ${r.rowCount} samples compacted`);
    }
    await c.query("SET session_replication_role = DEFAULT");
  });

  // One row per server per day; the 24 hourly slots come from a pool of 1,000 day profiles (values
  // differ per server-day through the pool; sizes are what this part measures).
  let dayRows = 0;
  let dayLayoutBytes = 0;
  let dayLayoutRows = 0;
  const dayCompactions: DayCompaction[] = [];
  const daysMs = await timed(async () => {
    await c.query(`
      CREATE TEMP TABLE bench_profile AS
      SELECT n, h_samples, h_online, h_players_min, h_players_max, h_players_sum, h_bots_max,
        (SELECT sum(x) FROM unnest(h_samples) x)::int AS samples, (SELECT sum(x) FROM unnest(h_online) x)::int AS online,
        (SELECT min(x) FROM unnest(h_players_min) x) AS players_min, (SELECT max(x) FROM unnest(h_players_max) x) AS players_max,
        (SELECT sum(x) FROM unnest(h_players_sum) x)::int AS players_sum, (SELECT max(x) FROM unnest(h_bots_max) x) AS bots_max
      FROM (
        SELECT n,
          array_agg(12::smallint ORDER BY h) AS h_samples,
          array_agg((12 - (n + h) % 3 / 2)::smallint ORDER BY h) AS h_online,
          array_agg(((n * 7 + h * 3) % 20)::smallint ORDER BY h) AS h_players_min,
          array_agg(((n * 7 + h * 3) % 20 + 4 + h % 5)::smallint ORDER BY h) AS h_players_max,
          array_agg((((n * 7 + h * 3) % 20 + 2) * 12)::int ORDER BY h) AS h_players_sum,
          array_agg((h % 3)::smallint ORDER BY h) AS h_bots_max
        FROM generate_series(0, 999) n, generate_series(0, 23) h GROUP BY n) p`);
    await c.query("SET session_replication_role = replica");
    const ids = await c.query<{ lo: string; hi: string }>(
      "SELECT min(id)::text AS lo, max(id)::text AS hi FROM game_server",
    );
    const lo = BigInt(ids.rows[0]?.lo ?? "0");
    const hi = BigInt(ids.rows[0]?.hi ?? "0");
    // Day by day as the crawler and the hourly retention job would: the day's rows written, then the day
    // leaving the raw window moved into its month row, then a VACUUM standing in for autovacuum (each
    // compaction rewrites every month row; its old versions' space is reused by the next day's).
    for (let d = 0; d < o.days; d++) {
      const day = new Date(startAt.getTime() + d * DAY_MS);
      const r = await c.query(
        `INSERT INTO server_day (game_server_id, day, samples, online, players_min, players_max, players_sum, bots_max, top_map,
           h_samples, h_online, h_players_min, h_players_max, h_players_sum, h_bots_max, h_map)
         SELECT g.id, $1::date, p.samples, p.online, p.players_min, p.players_max, p.players_sum, p.bots_max,
           g.map, p.h_samples, p.h_online, p.h_players_min, p.h_players_max, p.h_players_sum, p.h_bots_max, array_fill(g.map, ARRAY[24])
         FROM game_server g JOIN bench_profile p ON p.n = (g.id * 31 + $2::int * 17) % 1000`,
        [day.toISOString().slice(0, 10), d],
      );
      dayRows += r.rowCount ?? 0;
      if (d + 1 === o.rawDays) {
        // The layout before migration 20261124150000_server_day_month: every day a server_day row.
        dayLayoutBytes = await totalBytes(c, ["server_day"]);
        dayLayoutRows = dayRows;
      }
      // The retention run of the next day moves the day leaving the raw window.
      const before = new Date(day.getTime() + DAY_MS - o.rawDays * DAY_MS);
      if (before.getTime() <= startAt.getTime()) continue;
      const started = performance.now();
      let moved = 0;
      for (let from = lo; from <= hi; from += DAY_CHUNK) {
        await c.query("BEGIN");
        await c.query(DROP_STRAY_DAYS_SQL, [
          from.toString(),
          (from + DAY_CHUNK).toString(),
          before.toISOString().slice(0, 10),
        ]);
        const m = await c.query<{ n: number }>(MOVE_SERVER_DAYS_SQL, [
          from.toString(),
          (from + DAY_CHUNK).toString(),
          before.toISOString().slice(0, 10),
        ]);
        await c.query("COMMIT");
        moved += m.rows[0]?.n ?? 0;
      }
      const ms = performance.now() - started;
      dayCompactions.push({ day: before.toISOString().slice(0, 10), moved, ms });
      await c.query("VACUUM server_day, server_day_month");
      o.log(
        `storage: server days before ${before.toISOString().slice(0, 10)}: ${moved} moved in ${(ms / 1000).toFixed(1)} s`,
      );
    }
    await c.query("SET session_replication_role = DEFAULT");
    o.log(`storage: ${dayRows} server-day rows`);
  });

  let populationRows = 0;
  const populationMs = await timed(async () => {
    await c.query(`
      CREATE TEMP TABLE bench_dim AS
      SELECT 'ALL'::"PopulationDimension" AS dimension, '' AS key, count(*)::int AS servers, sum(players)::int AS players FROM game_server
      UNION ALL SELECT 'APP', app_id::text, count(*), sum(players) FROM game_server GROUP BY app_id
      UNION ALL SELECT 'FOLDER', folder, count(*), sum(players) FROM game_server GROUP BY folder
      UNION ALL SELECT 'MAP', map, count(*), sum(players) FROM game_server GROUP BY map
      UNION ALL SELECT 'REGION', region::text, count(*), sum(players) FROM game_server GROUP BY region
      UNION ALL SELECT 'PROTOCOL', protocol, count(*), sum(players) FROM game_server GROUP BY protocol`);
    const r = await c.query(
      `INSERT INTO population_rollup (resolution, dimension, key, bucket_at, servers_online, servers_seen, players_avg, players_peak, bots_avg)
       SELECT 'HOUR', d.dimension, d.key, t, d.servers * 0.95, d.servers,
         d.players * (0.6 + 0.4 * sin(extract(hour FROM t AT TIME ZONE 'UTC') * pi() / 12)), (d.players * 1.1)::int, d.servers * 0.1
       FROM bench_dim d, generate_series($1::timestamptz, $2::timestamptz - interval '1 hour', interval '1 hour') t`,
      [startAt, endAt],
    );
    const r2 = await c.query(
      `INSERT INTO population_rollup (resolution, dimension, key, bucket_at, servers_online, servers_seen, players_avg, players_peak, bots_avg)
       SELECT 'DAY', d.dimension, d.key, t, d.servers * 0.95, d.servers, d.players * 0.6, (d.players * 1.1)::int, d.servers * 0.1
       FROM bench_dim d, generate_series($1::timestamptz, $2::timestamptz - interval '1 day', interval '1 day') t`,
      [startAt, endAt],
    );
    populationRows = (r.rowCount ?? 0) + (r2.rowCount ?? 0);
  });
  await c.query("ANALYZE");
  return {
    endAt,
    timings: { serversMs, crawlsMs, rawMs, compactMs, daysMs, populationMs },
    rawRows,
    dayRows,
    populationRows,
    rawPartitions,
    rowLayoutBytes,
    rowLayoutRows,
    dayLayoutBytes,
    dayLayoutRows,
    dayCompactions,
  };
}

/** DAY buckets for the year before the generated history, so a 1-year population chart has a year of points. */
export async function extendPopulationToYear(
  c: Client,
  endAt: Date,
  days: number,
): Promise<number> {
  const yearStart = new Date(endAt.getTime() - 365 * DAY_MS);
  const historyStart = new Date(endAt.getTime() - days * DAY_MS);
  if (yearStart >= historyStart) return 0;
  const r = await c.query(
    `INSERT INTO population_rollup (resolution, dimension, key, bucket_at, servers_online, servers_seen, players_avg, players_peak, bots_avg)
     SELECT 'DAY', p.dimension, p.key, t, p.servers_online * 0.95, p.servers_seen, p.players_avg * (0.8 + 0.2 * sin(extract(doy FROM t) / 58.0)), p.players_peak, p.bots_avg
     FROM population_rollup p, generate_series($1::timestamptz, $2::timestamptz - interval '1 day', interval '1 day') t
     WHERE p.resolution = 'DAY' AND p.bucket_at = $2::timestamptz`,
    [yearStart, historyStart],
  );
  await c.query("ANALYZE population_rollup");
  return r.rowCount ?? 0;
}
