/**
 * Long-term history compaction: finished `server_day` rows (one per server per UTC day, 24 hourly slots)
 * moved into `server_day_month` (one row per server per UTC month, the days' arrays appended), which
 * TOAST compresses; a server_day row, under TOAST's ~2 KB threshold, never is. Reads go through
 * server_day_range (migration 20261124150000_server_day_month). Layout and numbers: docs/storage.md.
 */
import type { Db } from "../../shared/db";
import { SERVER_DAY_TOTALS } from "./server-day-totals";

/** server_day's day totals: one element per day in server_day_month. */
const DAY_COLUMNS = SERVER_DAY_TOTALS;

/** server_day's hourly slots with their element type: 24 elements per day in server_day_month. */
const HOUR_COLUMNS = [
  ["h_samples", "smallint"],
  ["h_online", "smallint"],
  ["h_players_min", "smallint"],
  ["h_players_max", "smallint"],
  ["h_players_sum", "integer"],
  ["h_bots_max", "smallint"],
  ["h_map", "text"],
] as const;

/** Servers per transaction: bounds the rows one move holds locked and the memory of its arrays. */
const SERVERS_PER_CHUNK = 5_000;
/** Two retention runs compact one after the other. */
const DAY_COMPACTION_LOCK_KEY = 7_271_011;
/** A chunk of the first run after the migration moves every old day of its servers: longer than 5 s. */
const COMPACT_TX_OPTIONS = { timeout: 600_000, maxWait: 60_000 };

/**
 * Moves the server_day rows of the servers `fromId` <= id < `toId` and days before `before` into
 * their month rows. Days are grouped per server and month (one row per conflict target) and appended
 * in day order; hourly arrays are padded to 24 slots, so day k of a month row is slots (k-1)*24+1..k*24.
 */
function moveSql(): string {
  const dayAggs = DAY_COLUMNS.map((c) => `array_agg(s.${c} ORDER BY s.day) AS ${c}`);
  // array_agg of 24-slot arrays is a 2-D array; unnest reads it back in row-major (day, slot) order.
  const hourAggs = HOUR_COLUMNS.map(
    ([c, t]) =>
      `ARRAY(SELECT x FROM unnest(array_agg((COALESCE(s.${c}, '{}'::${t}[]) || array_fill(NULL::${t}, ARRAY[24]))[1:24] ORDER BY s.day)) WITH ORDINALITY AS u(x, i) ORDER BY i) AS ${c}`,
  );
  const all = [...DAY_COLUMNS, ...HOUR_COLUMNS.map(([c]) => c)];
  return `
    WITH moved AS (
      DELETE FROM server_day WHERE game_server_id >= $1 AND game_server_id < $2 AND day < $3::date RETURNING *
    ), appended AS (
    INSERT INTO server_day_month AS m (game_server_id, month, day_no, ${all.join(", ")})
    SELECT s.game_server_id, date_trunc('month', s.day)::date,
      array_agg((extract(day FROM s.day))::smallint ORDER BY s.day), ${[...dayAggs, ...hourAggs].join(", ")}
    FROM moved s
    GROUP BY s.game_server_id, date_trunc('month', s.day)::date
    ON CONFLICT (game_server_id, month) DO UPDATE SET
      day_no = m.day_no || EXCLUDED.day_no, ${all.map((c) => `${c} = m.${c} || EXCLUDED.${c}`).join(", ")}
    )
    SELECT count(*)::int AS n FROM moved`;
}

/** Parameters: $1 the first server id, $2 the id after the last, $3 the first day not moved ('YYYY-MM-DD'). */
export const MOVE_SERVER_DAYS_SQL = moveSql();

/**
 * Rows of days a month row holds already: only a roll-up of a day after its raw samples were dropped
 * makes one (a sample written more than the raw window late), from that sample alone. The compacted
 * day, rolled up from all its samples, stays; the stray row goes.
 */
export const DROP_STRAY_DAYS_SQL = `
  DELETE FROM server_day s USING server_day_month m
  WHERE s.game_server_id >= $1 AND s.game_server_id < $2 AND s.day < $3::date
    AND m.game_server_id = s.game_server_id AND m.month = date_trunc('month', s.day)::date
    AND (extract(day FROM s.day))::smallint = ANY(m.day_no)`;

export interface DayCompactionResult {
  /** server_day rows moved into month rows. */
  movedDays: number;
  /** server_day rows of days already compacted, dropped (see DROP_STRAY_DAYS_SQL). */
  droppedStrays: number;
}

/**
 * Moves every server_day row of a day before `before` into server_day_month, SERVERS_PER_CHUNK servers
 * per transaction. Call it only for days whose raw samples are gone (the retention job passes the raw
 * window's start): no roll-up rewrites them any more. Idempotent: a moved row is deleted in the same
 * transaction, so a retried run finds nothing to move. Crawls write the days being crawled, which are
 * never moved, so the row locks taken here do not wait for them nor hold them.
 */
export async function compactServerDays(db: Db, before: Date): Promise<DayCompactionResult> {
  const day = before.toISOString().slice(0, 10);
  const bounds = await db.$queryRaw<{ lo: bigint | null; hi: bigint | null }[]>`
    SELECT min(id) AS lo, max(id) AS hi FROM game_server`;
  const lo = bounds[0]?.lo;
  const hi = bounds[0]?.hi;
  const result: DayCompactionResult = { movedDays: 0, droppedStrays: 0 };
  if (lo === null || lo === undefined || hi === null || hi === undefined) return result;
  for (let from = lo; from <= hi; from += BigInt(SERVERS_PER_CHUNK)) {
    const to = from + BigInt(SERVERS_PER_CHUNK);
    await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${DAY_COMPACTION_LOCK_KEY})`;
      result.droppedStrays += await tx.$executeRawUnsafe(DROP_STRAY_DAYS_SQL, from, to, day);
      const moved = await tx.$queryRawUnsafe<{ n: number }[]>(MOVE_SERVER_DAYS_SQL, from, to, day);
      result.movedDays += moved[0]?.n ?? 0;
    }, COMPACT_TX_OPTIONS);
  }
  return result;
}
