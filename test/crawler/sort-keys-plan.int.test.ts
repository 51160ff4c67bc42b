/**
 * The sort keys' trigger (game_server_sort, migration 20261128000000_game_server_sort_keys) must not keep a
 * plan made while the table was small. A fresh index's discovery crawl first updates game_server when a few
 * hundred servers are known; PL/pgSQL kept the plan of that moment for the connection's life, a hash join
 * over all of game_server_sort, so every later update through the connection read the whole table (20.3 s
 * of a 100,000-server discovery crawl: docs/BENCHMARKS-history.md, 2026-11-30). Sequential scans are counted
 * from pg_stat_user_tables, so the check does not depend on the machine's speed.
 */
import { loadConfig } from "../../src/shared/config";
import { createDb, type Db } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

/** A query batch of the crawl (QUERY_BATCH_SIZE's default). */
const FIRST_BATCH = loadConfig({}).queryBatchSize;
/** Enough rows that a look-up by primary key per changed row costs far less than reading the table. */
const GROWN_TO = 20_000;

describe("game_server_sort's update trigger", () => {
  let t: TestDatabase;
  let one: Db;

  beforeAll(async () => {
    t = await createTestDatabase("gsindex_sortplan");
    // One connection, so every statement below runs where the trigger's first plan was made.
    one = createDb(t.url, { max: 1 });
  });
  afterAll(async () => {
    await one.$disconnect();
    await t.drop();
  });

  const addServers = (from: number, count: number) =>
    one.$executeRawUnsafe(
      `INSERT INTO game_server (address, ip, query_port, status, updated_at)
       SELECT format('10.%s.%s.%s', i / 65536, i / 256 % 256, i % 256), format('10.%s.%s.%s', i / 65536, i / 256 % 256, i % 256)::inet,
         27015, 'UNKNOWN', now()
       FROM generate_series($1::int, $2::int) i`,
      from,
      from + count - 1,
    );

  /** Sequential scans of game_server_sort so far (this connection's counts flushed first). */
  const sortTableScans = async (): Promise<number> => {
    await one.$queryRawUnsafe("SELECT pg_stat_force_next_flush()::text");
    const [r] = await one.$queryRawUnsafe<{ n: number }[]>(
      "SELECT seq_scan::int AS n FROM pg_stat_user_tables WHERE relname = 'game_server_sort'",
    );
    return r?.n ?? 0;
  };

  it("looks the changed rows up by key once the table has grown, not through the plan it made while it was small", async () => {
    await addServers(1, FIRST_BATCH);
    // The connection's first update of game_server: a query batch's answers while the index is that small.
    await one.$executeRawUnsafe("UPDATE game_server SET last_answered_at = now(), ping_ms = 10");
    await addServers(1_000, GROWN_TO);

    const before = await sortTableScans();
    const changed = await one.$executeRawUnsafe(
      `UPDATE game_server SET last_answered_at = TIMESTAMPTZ '2026-11-30 01:00:00+00', ping_ms = 42
       WHERE id IN (SELECT id FROM game_server ORDER BY id DESC LIMIT 5)`,
    );
    expect(changed).toBe(5);
    expect((await sortTableScans()) - before).toBe(0);

    // And the keys followed.
    const keys = await one.$queryRawUnsafe<{ seen: Date; ping: number }[]>(
      `SELECT k.last_seen_key AS seen, k.ping_key AS ping FROM game_server_sort k
       WHERE k.game_server_id IN (SELECT id FROM game_server ORDER BY id DESC LIMIT 5)`,
    );
    expect(keys).toHaveLength(5);
    for (const k of keys) {
      expect(k.seen.toISOString()).toBe("2026-11-30T01:00:00.000Z");
      expect(k.ping).toBe(42);
    }
    expect(await one.gameServerSort.count()).toBe(GROWN_TO + FIRST_BATCH);
  });
});
