/**
 * Long-term history compacted into one row per server per month (docs/storage.md, "Server days"): the
 * history reads (HOUR and DAY points and buckets, as the API reads them) give the same answers before
 * and after, a retried compaction adds nothing, a stray row of a compacted day is not read twice, and
 * a database migrated from before the month rows is converted by its first retention run.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { compactServerDays } from "../../src/crawler/store/day-compaction";
import { applyRetention } from "../../src/crawler/store/history-store";
import { readServerHistories, readServerHistoryBuckets } from "../../src/history/server-history";
import { migrate, MIGRATIONS_DIR, readMigrations } from "../../src/migrate";
import type { Db } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const MIGRATION = "20261124150000_server_day_month";

// Loaded machine: a database per suite and a few hundred statements.
jest.setTimeout(180_000);

/** 00:00 UTC today. */
const today = new Date(Math.floor(Date.now() / DAY) * DAY);
/** 40 days of history up to yesterday: at least one month boundary inside. */
const first = new Date(today.getTime() - 40 * DAY);
const iso = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * Plain SQL, not the Prisma client: the migration test below runs on a schema from before later columns,
 * and the client's create returns every column it knows.
 */
async function addServers(db: Db, n: number): Promise<number[]> {
  const rows = await db.$queryRaw<{ id: bigint }[]>`
    INSERT INTO game_server (address, query_port, app_id, folder)
    SELECT '127.0.0.1', 27015 + i, 730, 'csgo' FROM generate_series(0, ${n}::int - 1) AS i
    RETURNING id`;
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/**
 * A server_day row per server per day as the roll-ups leave them: hours without samples NULL, an hour
 * with samples all unanswered, maps changing through the day. The third server skips every third day;
 * one row has no hourly arrays at all (rows older than the hourly slots).
 */
async function seedDays(db: Db, ids: number[]): Promise<void> {
  await db.$executeRaw`
    INSERT INTO server_day (game_server_id, day, samples, online, players_min, players_max, players_sum, bots_max, top_map,
      h_samples, h_online, h_players_min, h_players_max, h_players_sum, h_bots_max, h_map)
    SELECT g.id, d.day, x.samples, x.online, x.pmin, x.pmax, x.psum, x.bmax, x.top_map,
      h.s, h.o, h.pmin, h.pmax, h.psum, h.b, h.m
    FROM unnest(${ids}::bigint[]) WITH ORDINALITY AS g(id, n)
    CROSS JOIN generate_series(${first}::date, ${today}::date - 1, interval '1 day') AS d0
    CROSS JOIN LATERAL (SELECT d0::date AS day, (d0::date - ${first}::date) AS k) d
    CROSS JOIN LATERAL (
      SELECT array_agg(CASE WHEN (hr + d.k + g.n) % 9 = 0 THEN NULL ELSE 12 END::smallint ORDER BY hr) AS s,
        array_agg(CASE WHEN (hr + d.k + g.n) % 9 = 0 THEN NULL WHEN hr = 5 THEN 0 ELSE 12 - (hr + g.n) % 3 END::smallint ORDER BY hr) AS o,
        array_agg(CASE WHEN (hr + d.k + g.n) % 9 = 0 OR hr = 5 THEN NULL ELSE (hr * 3 + d.k + g.n) % 17 END::smallint ORDER BY hr) AS pmin,
        array_agg(CASE WHEN (hr + d.k + g.n) % 9 = 0 OR hr = 5 THEN NULL ELSE (hr * 3 + d.k + g.n) % 17 + hr % 4 END::smallint ORDER BY hr) AS pmax,
        array_agg(CASE WHEN (hr + d.k + g.n) % 9 = 0 THEN NULL ELSE ((hr * 3 + d.k + g.n) % 17) * 11 END ORDER BY hr) AS psum,
        array_agg(CASE WHEN (hr + d.k + g.n) % 9 = 0 THEN NULL ELSE (hr % 3)::smallint END ORDER BY hr) AS b,
        array_agg(CASE WHEN (hr + d.k + g.n) % 9 = 0 OR hr = 5 THEN NULL WHEN (hr + d.k) % 8 < 5 THEN 'de_dust2' ELSE 'cs_office' END ORDER BY hr) AS m
      FROM generate_series(0, 23) hr
    ) h
    CROSS JOIN LATERAL (
      SELECT COALESCE((SELECT sum(v) FROM unnest(h.s) v), 0)::int AS samples, COALESCE((SELECT sum(v) FROM unnest(h.o) v), 0)::int AS online,
        (SELECT min(v) FROM unnest(h.pmin) v) AS pmin, (SELECT max(v) FROM unnest(h.pmax) v) AS pmax,
        COALESCE((SELECT sum(v) FROM unnest(h.psum) v), 0)::int AS psum, (SELECT max(v) FROM unnest(h.b) v) AS bmax,
        (SELECT m FROM unnest(h.m, h.o) AS u(m, o) WHERE m IS NOT NULL GROUP BY m ORDER BY sum(o) DESC NULLS LAST, m LIMIT 1) AS top_map
    ) x
    WHERE NOT (g.n = 3 AND d.k % 3 = 0)`;
  await db.$executeRaw`
    UPDATE server_day SET h_samples = NULL, h_online = NULL, h_players_min = NULL, h_players_max = NULL,
      h_players_sum = NULL, h_bots_max = NULL, h_map = NULL
    WHERE game_server_id = ${ids[0]} AND day = ${first}::date + 3`;
}

/** What the API reads: HOUR and DAY points, and buckets of each, over the whole history and a slice of it. */
async function reads(db: Db, ids: number[]): Promise<unknown> {
  const all = { from: first, to: today };
  const slice = {
    from: new Date(first.getTime() + 9 * DAY + 5 * HOUR),
    to: new Date(today.getTime() - 11 * DAY - 7 * HOUR),
  };
  const out: unknown[] = [];
  for (const range of [all, slice]) {
    for (const resolution of ["HOUR", "DAY"] as const)
      out.push([...(await readServerHistories(db, ids, { ...range, resolution })).entries()]);
    out.push([
      ...(
        await readServerHistoryBuckets(db, ids, {
          ...range,
          resolution: "HOUR",
          bucketMs: 6 * HOUR,
        })
      ).entries(),
    ]);
    out.push([
      ...(
        await readServerHistoryBuckets(db, ids, { ...range, resolution: "DAY", bucketMs: 7 * DAY })
      ).entries(),
    ]);
  }
  return out;
}

/**
 * Every day as server_day_range returns it. A row without hourly arrays comes back with 24 empty slots
 * once compacted (the same points): compared as such.
 */
async function days(db: Db): Promise<unknown[]> {
  return db.$queryRaw<unknown[]>`
    SELECT game_server_id::int AS id, day::text, samples, online, players_min, players_max, players_sum, bots_max, top_map,
      COALESCE(h_samples, array_fill(NULL::smallint, ARRAY[24]))::text AS s, COALESCE(h_online, array_fill(NULL::smallint, ARRAY[24]))::text AS o,
      COALESCE(h_players_min, array_fill(NULL::smallint, ARRAY[24]))::text AS pmin, COALESCE(h_players_max, array_fill(NULL::smallint, ARRAY[24]))::text AS pmax,
      COALESCE(h_players_sum, array_fill(NULL::int, ARRAY[24]))::text AS psum, COALESCE(h_bots_max, array_fill(NULL::smallint, ARRAY[24]))::text AS b,
      COALESCE(h_map, array_fill(NULL::text, ARRAY[24]))::text AS m
    FROM server_day_range('-infinity'::date, 'infinity'::date) ORDER BY 1, 2`;
}

async function counts(db: Db): Promise<{ rows: number; months: number; monthDays: number }> {
  const r = await db.$queryRaw<{ rows: number; months: number; month_days: number }[]>`
    SELECT (SELECT count(*) FROM server_day)::int AS rows, (SELECT count(*) FROM server_day_month)::int AS months,
      (SELECT COALESCE(sum(cardinality(day_no)), 0) FROM server_day_month)::int AS month_days`;
  return { rows: r[0]!.rows, months: r[0]!.months, monthDays: r[0]!.month_days };
}

describe("server day compaction", () => {
  let t: TestDatabase;
  let ids: number[];
  let total: number;
  let before: { reads: unknown; days: unknown[] };

  beforeAll(async () => {
    t = await createTestDatabase();
    ids = await addServers(t.db, 3);
    await seedDays(t.db, ids);
    total = (await counts(t.db)).rows;
    before = { reads: await reads(t.db, ids), days: await days(t.db) };
    expect(before.days).toHaveLength(total);
  });
  afterAll(async () => t.drop());

  it("moves the days before the cut into month rows and reads them back as they were, twice over", async () => {
    const cut = new Date(first.getTime() + 17 * DAY);
    const expected = before.days.filter((d) => (d as { day: string }).day < iso(cut)).length;
    expect(await compactServerDays(t.db, cut)).toEqual({ movedDays: expected, droppedStrays: 0 });
    expect(await counts(t.db)).toMatchObject({ rows: total - expected, monthDays: expected });
    expect(await days(t.db)).toEqual(before.days);
    expect(await reads(t.db, ids)).toEqual(before.reads);

    // A retried run finds nothing to move.
    expect(await compactServerDays(t.db, cut)).toEqual({ movedDays: 0, droppedStrays: 0 });
    expect(await counts(t.db)).toMatchObject({ rows: total - expected, monthDays: expected });

    // The next days are appended to the month rows already there.
    const later = new Date(today.getTime() - 2 * DAY);
    const all = before.days.filter((d) => (d as { day: string }).day < iso(later)).length;
    expect((await compactServerDays(t.db, later)).movedDays).toBe(all - expected);
    expect(await counts(t.db)).toMatchObject({ rows: total - all, monthDays: all });
    expect(await days(t.db)).toEqual(before.days);
    expect(await reads(t.db, ids)).toEqual(before.reads);
  });

  it("keeps a compacted day once when a roll-up writes a row for it again", async () => {
    // A sample arriving after its day left the raw window re-rolls that hour alone into a new row.
    const day = iso(new Date(first.getTime() + 2 * DAY));
    await t.db.$executeRaw`
      INSERT INTO server_day (game_server_id, day, samples, online, h_samples, h_online, h_map)
      VALUES (${ids[1]}, ${day}::date, 1, 1, array_fill(NULL::smallint, ARRAY[24]),
        array_fill(NULL::smallint, ARRAY[24]), array_fill(NULL::text, ARRAY[24]))`;
    const now = await counts(t.db);
    expect(await compactServerDays(t.db, today)).toMatchObject({ droppedStrays: 1 });
    expect(await counts(t.db)).toMatchObject({ rows: 0, monthDays: now.monthDays + now.rows - 1 });
    expect(await days(t.db)).toEqual(before.days);
    expect(await reads(t.db, ids)).toEqual(before.reads);
  });

  it("is run by the retention job for the days past the raw window, and drops whole months past the rollup limit", async () => {
    const r = await applyRetention(t.db, { rawDays: 7, rollupDays: 0, now: today });
    expect(r.compactedDays).toBe(0);
    expect(await days(t.db)).toEqual(before.days);
    // 20 days kept: the months wholly before the limit go, the month the limit falls in stays whole.
    await applyRetention(t.db, { rawDays: 7, rollupDays: 20, now: today });
    const limit = new Date(today.getTime() - 20 * DAY);
    const monthStart = iso(new Date(Date.UTC(limit.getUTCFullYear(), limit.getUTCMonth(), 1)));
    expect(await days(t.db)).toEqual(
      before.days.filter((d) => (d as { day: string }).day >= monthStart),
    );
  });
});

describe("migration 20261124150000_server_day_month", () => {
  it("leaves server_day as it was, and the first retention run moves the days past the raw window", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gsindex-migrations-"));
    for (const m of readMigrations().filter((x) => x.name < MIGRATION))
      cpSync(path.join(MIGRATIONS_DIR, m.name), path.join(dir, m.name), { recursive: true });
    const t = await createTestDatabase("gsindex_test", { migrationsDir: dir });
    try {
      const ids = await addServers(t.db, 3);
      await seedDays(t.db, ids);
      const old = await t.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM server_day`;
      // This migration first; later ones (applied with it) do not touch server_day.
      expect((await migrate(t.url)).applied[0]).toBe(MIGRATION);
      const rows = await days(t.db);
      expect(rows).toHaveLength(old[0]!.n);
      const answers = await reads(t.db, ids);

      const r = await applyRetention(t.db, { rawDays: 7, rollupDays: 0, now: today });
      const moved = rows.filter(
        (d) => (d as { day: string }).day < iso(new Date(today.getTime() - 7 * DAY)),
      ).length;
      expect(r.compactedDays).toBe(moved);
      expect(await counts(t.db)).toMatchObject({ rows: old[0]!.n - moved, monthDays: moved });
      expect(await days(t.db)).toEqual(rows);
      expect(await reads(t.db, ids)).toEqual(answers);
    } finally {
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
