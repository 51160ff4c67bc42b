/**
 * Raw samples live in two partitioned tables (docs/storage.md, "Raw samples"): crawls write one row per
 * sample into server_sample, one partition per UTC hour (server_sample_pYYYYMMDDHH; day partitions
 * server_sample_pYYYYMMDD from before 20261124140000_raw_sample_day; a DEFAULT partition for rows whose
 * hour has none), and the retention job compacts each finished hour into server_sample_day, one row per
 * server per UTC day, one partition per day (server_sample_day_pYYYYMMDD).
 * Partitions are dropped wholesale (compacted hours, days past the raw window): no DELETE, no vacuum debt.
 */
import type { Db } from "../../shared/db";
import { DAY_MS, floorHour, HOUR_MS, utcDay } from "../../history/time";

/** Any constant; serialises partition DDL and compaction between workers. */
export const PARTITION_LOCK_KEY = 7_271_005;

const HOUR_PREFIX = "server_sample_p";
const DAY_PREFIX = "server_sample_day_p";

const digits = (at: Date, chars: number): string =>
  at.toISOString().slice(0, chars).replace(/[-T]/g, "");

/** The partition of server_sample holding the hour of `at`. */
export function hourPartitionName(at: Date): string {
  return HOUR_PREFIX + digits(floorHour(at), 13);
}

/** The partition of server_sample_day holding the day of `at`. */
export function dayPartitionName(at: Date): string {
  return DAY_PREFIX + digits(utcDay(at), 10);
}

const known = new WeakMap<Db, Set<string>>();

async function ensurePartition(
  db: Db,
  parent: string,
  name: string,
  from: string,
  to: string,
): Promise<void> {
  let seen = known.get(db);
  if (!seen) known.set(db, (seen = new Set()));
  if (seen.has(name)) return;
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`;
    // Identifiers and bounds come from a Date, never from input.
    await tx.$executeRawUnsafe(
      `CREATE TABLE IF NOT EXISTS "${name}" PARTITION OF "${parent}" FOR VALUES FROM ('${from}') TO ('${to}')`,
    );
  });
  seen.add(name);
}

/**
 * Creates the 24 hour partitions of the UTC day holding `at` (a crawl calls it as it starts; idempotent,
 * safe between concurrent workers): a whole day at once, so that a day's samples written in bulk land in
 * their hours, not in the DEFAULT partition, which every hour's rollup would scan. An hour with rows in
 * the DEFAULT partition (compacted already, written late) gets none: those rows cannot move.
 */
export async function ensureSamplePartition(db: Db, at: Date): Promise<void> {
  const day = utcDay(at);
  let seen = known.get(db);
  if (!seen) known.set(db, (seen = new Set()));
  const key = `hours ${day.toISOString()}`;
  if (seen.has(key)) return;
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`;
    const taken = new Set(
      (
        await tx.$queryRaw<{ h: number }[]>`
          SELECT DISTINCT extract(hour FROM crawl_at AT TIME ZONE 'UTC')::int AS h FROM server_sample_default
          WHERE crawl_at >= ${day} AND crawl_at < ${new Date(day.getTime() + DAY_MS)}`
      ).map((r) => r.h),
    );
    for (let h = 0; h < 24; h++) {
      if (taken.has(h)) continue;
      const from = new Date(day.getTime() + h * HOUR_MS);
      // Identifiers and bounds come from a Date, never from input.
      await tx.$executeRawUnsafe(
        `CREATE TABLE IF NOT EXISTS "${hourPartitionName(from)}" PARTITION OF "server_sample" FOR VALUES FROM ('${from.toISOString()}') TO ('${new Date(from.getTime() + HOUR_MS).toISOString()}')`,
      );
    }
  });
  seen.add(key);
}

/** Creates the day partition of server_sample_day holding `at` (compaction calls it). */
export async function ensureSampleDayPartition(db: Db, at: Date): Promise<void> {
  const day = utcDay(at);
  await ensurePartition(
    db,
    "server_sample_day",
    dayPartitionName(day),
    day.toISOString().slice(0, 10),
    new Date(day.getTime() + DAY_MS).toISOString().slice(0, 10),
  );
}

export interface SamplePartition {
  name: string;
  /** The UTC day the partition's samples belong to. */
  day: Date;
  /** Where its range starts and ends: an hour (or a day) of server_sample, a day of server_sample_day. */
  from: Date;
  to: Date;
  compacted: boolean;
}

/** Every hour and day partition of the raw samples (not the DEFAULT one), by name. */
export async function listSamplePartitions(db: Db): Promise<SamplePartition[]> {
  const rows = await db.$queryRaw<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
    WHERE p.relname IN ('server_sample', 'server_sample_day') ORDER BY c.relname`;
  return rows.flatMap((r): SamplePartition[] => {
    const raw = /^server_sample_p(\d{4})(\d{2})(\d{2})(\d{2})?$/.exec(r.name);
    if (raw) {
      const from = new Date(`${raw[1]}-${raw[2]}-${raw[3]}T${raw[4] ?? "00"}:00:00Z`);
      const to = new Date(from.getTime() + (raw[4] === undefined ? DAY_MS : HOUR_MS));
      return [{ name: r.name, day: utcDay(from), from, to, compacted: false }];
    }
    const day = /^server_sample_day_p(\d{4})(\d{2})(\d{2})$/.exec(r.name);
    if (day) {
      const from = new Date(`${day[1]}-${day[2]}-${day[3]}T00:00:00Z`);
      return [
        { name: r.name, day: from, from, to: new Date(from.getTime() + DAY_MS), compacted: true },
      ];
    }
    return [];
  });
}

/** Forgets that a partition exists (compaction dropped it inside its own transaction). */
export function forgetSamplePartition(db: Db, name: string): void {
  known.get(db)?.delete(name);
}

/** Forgets the days whose hours were made, up to `before` (their partitions are gone). */
function forgetHours(db: Db, before: Date): void {
  const seen = known.get(db);
  if (!seen) return;
  for (const key of seen)
    if (key.startsWith("hours ") && new Date(key.slice(6)).getTime() < before.getTime())
      seen.delete(key);
}

/**
 * Drops every partition that ends on or before `before`, and the DEFAULT partition's rows before it.
 * Returns the dropped names.
 */
export async function dropSamplePartitionsBefore(db: Db, before: Date): Promise<string[]> {
  const dropped = (await listSamplePartitions(db))
    .filter((p) => p.to.getTime() <= before.getTime())
    .map((p) => p.name);
  // One statement for all: a window's worth of hours after a long stop is hundreds of tables.
  if (dropped.length > 0)
    await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`;
      await tx.$executeRawUnsafe(`DROP TABLE IF EXISTS ${dropped.map((n) => `"${n}"`).join(", ")}`);
    });
  for (const name of dropped) forgetSamplePartition(db, name);
  forgetHours(db, before);
  // Late rows of compacted hours: rare and few, so a DELETE costs no real vacuum.
  await db.$executeRaw`DELETE FROM server_sample_default WHERE crawl_at < ${before}`;
  return dropped;
}
