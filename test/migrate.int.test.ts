import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { migrate, MIGRATIONS_DIR, readMigrations } from "../src/migrate";
import {
  answerCompression,
  createTestDatabase,
  serverHasLz4,
  type TestDatabase,
} from "./helpers/db";
import { startTestApi, type TestApi } from "./graphql/helpers/api";

/**
 * A database at the migration before `migration`: every migration folder up to (not including) it, copied to
 * a folder of its own, to which a test may add `migration` alone to apply just that one.
 */
async function databaseBefore(
  migration: string,
): Promise<{ t: TestDatabase; dir: string; dispose(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), "gsindex-migrations-"));
  for (const m of readMigrations().filter((x) => x.name < migration)) {
    cpSync(path.join(MIGRATIONS_DIR, m.name), path.join(dir, m.name), { recursive: true });
  }
  const t = await createTestDatabase("gsindex_test", { migrationsDir: dir });
  return {
    t,
    dir,
    async dispose() {
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The describe block's database at the migration before `migration` (databaseBefore, made before its tests and
 * dropped after them); `apply()` adds `migration` alone and applies it.
 */
function beforeMigration(migration: string): {
  db(): TestDatabase;
  apply(): ReturnType<typeof migrate>;
} {
  let fixture: Awaited<ReturnType<typeof databaseBefore>> | undefined;
  beforeAll(async () => {
    fixture = await databaseBefore(migration);
  });
  afterAll(async () => {
    await fixture?.dispose();
  });
  const ready = (): Awaited<ReturnType<typeof databaseBefore>> => {
    if (!fixture) throw new Error(`no database before ${migration}: beforeAll did not run`);
    return fixture;
  };
  return {
    db: () => ready().t,
    apply: () => {
      const { t, dir } = ready();
      cpSync(path.join(MIGRATIONS_DIR, migration), path.join(dir, migration), { recursive: true });
      return migrate(t.url, { dir });
    },
  };
}

describe("migrate", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it("records every migration in _prisma_migrations with its sha256, and a second run is a no-op", async () => {
    const names = readMigrations().map((m) => m.name);
    const rows = await t.db.$queryRaw<
      { migration_name: string; checksum: string; finished_at: Date | null }[]
    >`
      SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name`;
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const sql = readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(sql).digest("hex"));
      expect(row.finished_at).toBeInstanceOf(Date);
    }
    const again = await migrate(t.url);
    expect(again.applied).toEqual([]);
    expect(again.skipped).toEqual(names);
  });

  it("concurrent runners apply nothing twice", async () => {
    const results = await Promise.all([migrate(t.url), migrate(t.url)]);
    expect(results.flatMap((r) => r.applied)).toEqual([]);
  });

  it("gives a schema the generated client can use", async () => {
    const source = await t.db.masterSource.create({
      data: { name: "sim", kind: "VALVE_UDP", host: "127.0.0.1", port: 27011, regions: [0, 255] },
    });
    const server = await t.db.gameServer.create({
      data: {
        address: "127.0.0.1",
        ip: "127.0.0.1",
        queryPort: 27015,
        sourceId: source.id,
        keywords: ["a", "b"],
        name: "x",
      },
    });
    expect(server.status).toBe("UNKNOWN");
    const found = await t.db.gameServer.findMany({ where: { keywords: { hasEvery: ["a"] } } });
    expect(found.map((s) => s.id)).toEqual([server.id]);
  });
});

describe("migration 20261124000000_bigint_ids", () => {
  const BIGINT_MIGRATION = "20261124000000_bigint_ids";
  let t: TestDatabase;
  let api: TestApi | undefined;
  let dispose: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ t, dispose } = await databaseBefore(BIGINT_MIGRATION));
  });
  afterAll(async () => {
    await api?.close();
    await dispose?.();
  });

  const columnType = async (table: string, column: string) =>
    (
      await t.db.$queryRaw<
        { t: string }[]
      >`SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = ${table}::regclass AND attname = ${column}`
    )[0]?.t;

  it("widens every crawl-grown id to bigint, keeping ids, references and API cursors valid", async () => {
    expect(await columnType("game_server", "id")).toBe("integer");
    // Rows at the old migration: five servers with a crawl, a run, a planned batch, samples and day rows.
    await t.db.$executeRawUnsafe(`
      INSERT INTO master_source (name, kind, host, updated_at) VALUES ('s', 'VALVE_UDP', '127.0.0.1', now());
      INSERT INTO game_server (address, ip, query_port, players, name, status, source_id)
        SELECT '127.0.0.1', '127.0.0.1', 27000 + i, i * 10, 'server ' || i, 'ONLINE', 1 FROM generate_series(1, 5) AS i;
      INSERT INTO crawl (key, source_id, started_at) VALUES ('s-1', 1, '2026-11-20T00:00:00Z');
      INSERT INTO crawl_run (crawl_id, region) VALUES (1, 3);
      INSERT INTO crawl_batch (crawl_id, batch_key, run_id, server_ids) VALUES (1, 'r3-0-0', 1, ARRAY[1, 2, 3, 4, 5]);
      CREATE TABLE server_sample_p20261120 PARTITION OF server_sample FOR VALUES FROM ('2026-11-20') TO ('2026-11-21');
      INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, max_players)
        SELECT id, '2026-11-20T00:00:00Z', 1, true, players, 32 FROM game_server;
      INSERT INTO server_day (game_server_id, day, samples) SELECT id, '2026-11-20', 1 FROM game_server;`);
    const ids = (
      await t.db.$queryRaw<{ id: number }[]>`SELECT id FROM game_server ORDER BY players DESC`
    ).map((r) => Number(r.id));
    // The cursor the API handed out for the second row under the default ordering (players, descending):
    // base64url(JSON [order, sort value, id]) as src/graphql/common/cursor.ts has always encoded it.
    const cursor = Buffer.from(JSON.stringify(["players:DESC", 40, ids[1]]), "utf8").toString(
      "base64url",
    );

    // Later migrations follow it (the client below expects the latest schema).
    expect((await migrate(t.url)).applied[0]).toBe(BIGINT_MIGRATION);

    for (const [table, column] of [
      ["game_server", "id"],
      ["crawl", "id"],
      ["crawl_run", "id"],
      ["crawl_run", "crawl_id"],
      ["crawl_batch", "crawl_id"],
      ["crawl_batch", "run_id"],
      ["server_sample", "game_server_id"],
      ["server_sample", "crawl_id"],
      ["server_sample_p20261120", "game_server_id"],
      ["server_day", "game_server_id"],
    ] as const) {
      expect([table, column, await columnType(table, column)]).toEqual([table, column, "bigint"]);
    }
    expect(await columnType("crawl_batch", "server_ids")).toBe("bigint[]");
    const seqs = await t.db.$queryRaw<
      { sequencename: string; data_type: string; max_value: bigint }[]
    >`
      SELECT sequencename, data_type::text, max_value FROM pg_sequences WHERE sequencename IN ('game_server_id_seq', 'crawl_id_seq', 'crawl_run_id_seq') ORDER BY 1`;
    expect(seqs.map((s) => [s.sequencename, s.data_type, s.max_value])).toEqual([
      ["crawl_id_seq", "bigint", 9223372036854775807n],
      ["crawl_run_id_seq", "bigint", 9223372036854775807n],
      ["game_server_id_seq", "bigint", 9223372036854775807n],
    ]);
    // Ids and references are what they were.
    expect(
      (await t.db.gameServer.findMany({ orderBy: { players: "desc" } })).map((s) => Number(s.id)),
    ).toEqual(ids);
    expect((await t.db.crawlBatch.findFirstOrThrow()).serverIds.map(Number)).toEqual([
      1, 2, 3, 4, 5,
    ]);
    expect(await t.db.serverSample.count()).toBe(5);

    // The cursor from before the migration pages on from where it was.
    api = await startTestApi({ db: t.db });
    const page = await api.gql<{
      servers: { nodes: { id: number; players: number }[]; pageInfo: { hasNextPage: boolean } };
    }>(
      `query ($after: String) { servers(first: 2, after: $after) { nodes { id players } pageInfo { hasNextPage } } }`,
      { after: cursor },
    );
    expect(page.errors).toBeUndefined();
    expect(page.data?.servers.nodes).toEqual([
      { id: ids[2], players: 30 },
      { id: ids[3], players: 20 },
    ]);
    expect(page.data?.servers.pageInfo.hasNextPage).toBe(true);

    // The sequences go on past 2^31, and the references hold such ids.
    await t.db.$executeRaw`SELECT setval('game_server_id_seq', 3000000000)`;
    const [big] = await t.db.$queryRaw<
      { id: bigint }[]
    >`INSERT INTO game_server (address, query_port) VALUES ('127.0.0.9', 27015) RETURNING id`;
    expect(big?.id).toBe(3000000001n);
    await t.db
      .$executeRaw`INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, max_players) VALUES (${big?.id}, '2026-11-20T01:00:00Z', 1, true, 1, 2)`;
    await expect(
      t.db
        .$executeRaw`INSERT INTO server_day (game_server_id, day) VALUES (4000000000, '2026-11-20')`,
    ).rejects.toThrow(/foreign key/);
  });
});

describe("migration 20261124060000_counts_provenance_coverage", () => {
  const MIGRATION = "20261124060000_counts_provenance_coverage";
  const before = beforeMigration(MIGRATION);

  it("fills in where existing rows' player counts came from, and which old listings stopped short", async () => {
    const t = before.db();
    await t.db.$executeRawUnsafe(`
      INSERT INTO master_source (name, kind, host, updated_at) VALUES ('s', 'VALVE_UDP', '127.0.0.1', now());
      INSERT INTO game_server (address, query_port, protocol, name, last_answered_at, management_registered) VALUES
        ('127.0.0.1', 1, 'source', 'a2s', now(), false),
        ('127.0.0.1', 2, 'quake3', 'q3', now(), false),
        ('bomb.example.org', 3, 'bomberman', 'bomb', NULL, true),
        ('169.254.1.1', 4, 'source', 'relay', NULL, false),
        ('127.0.0.1', 5, 'source', NULL, NULL, false);
      INSERT INTO crawl (key, source_id, started_at, finished_at) VALUES ('s-1', 1, '2026-11-20T00:00:00Z', '2026-11-20T00:05:00Z');
      INSERT INTO crawl_run (crawl_id, region, split, finished_at, partial) VALUES
        (1, 1, '', '2026-11-20T00:01:00Z', false), (1, 2, '', '2026-11-20T00:02:00Z', true);`);

    expect((await migrate(t.url)).applied[0]).toBe(MIGRATION);

    const servers = await t.db.gameServer.findMany({
      orderBy: { queryPort: "asc" },
      select: { playersSource: true },
    });
    expect(servers.map((s) => s.playersSource)).toEqual([
      "A2S_INFO",
      "LEGACY_STATUS",
      "MANAGEMENT",
      "STEAM_WEB_API",
      null,
    ]);
    const runs = await t.db.crawlRun.findMany({
      orderBy: { region: "asc" },
      select: { truncation: true, cappedParts: true },
    });
    expect(runs).toEqual([
      { truncation: null, cappedParts: 0 },
      { truncation: "CUT_SHORT", cappedParts: 0 },
    ]);
    expect(await t.db.crawl.findFirstOrThrow()).toMatchObject({
      listedAt: new Date("2026-11-20T00:02:00Z"),
      timedOut: 0,
      refused: 0,
      queriedAt: null,
    });
  });
});

describe("migration 20261124120000_population_min_fake_reasons", () => {
  const MIGRATION = "20261124120000_population_min_fake_reasons";
  const before = beforeMigration(MIGRATION);

  it("gives farm-flagged servers their reason, and old buckets a minimum of 0 and a peak no lower than their average", async () => {
    const t = before.db();
    await t.db.$executeRawUnsafe(`
      INSERT INTO game_server (address, query_port, suspected_fake) VALUES ('192.0.2.1', 1, true), ('192.0.2.1', 2, false);
      INSERT INTO population_rollup (resolution, dimension, key, bucket_at, servers_online, servers_seen, players_avg, players_peak, bots_avg) VALUES
        ('HOUR', 'ALL', '', '2026-11-20T00:00:00Z', 10, 10, 242523, 196613, 0),
        ('HOUR', 'ALL', '', '2026-11-20T01:00:00Z', 10, 10, 100.5, 120, 0);`);
    expect(await before.apply()).toMatchObject({ applied: [MIGRATION] });
    const servers = await t.db.$queryRaw<
      { query_port: number; reasons: string[] }[]
    >`SELECT query_port, fake_reasons::text[] AS reasons FROM game_server ORDER BY query_port`;
    expect(servers).toEqual([
      { query_port: 1, reasons: ["PORT_FARM"] },
      { query_port: 2, reasons: [] },
    ]);
    const buckets = await t.db.$queryRaw<
      { peak: number; low: number }[]
    >`SELECT players_peak AS peak, players_min AS low FROM population_rollup ORDER BY bucket_at`;
    expect(buckets).toEqual([
      { peak: 242523, low: 0 },
      { peak: 120, low: 0 },
    ]);
  });
});

describe("migration 20261124190000_game_server_search", () => {
  const MIGRATION = "20261124190000_game_server_search";
  const before = beforeMigration(MIGRATION);

  it("copies existing servers' names and player names into game_server_search and keeps them in step", async () => {
    const t = before.db();
    await t.db.$executeRawUnsafe(`
      INSERT INTO game_server (address, query_port, name, player_names) VALUES
        ('192.0.2.1', 1, 'Dust Town', E'alice\\nbob'), ('192.0.2.1', 2, NULL, ''), ('192.0.2.1', 3, NULL, 'carol')`);
    expect(await before.apply()).toMatchObject({ applied: [MIGRATION] });
    const search = () =>
      t.db.$queryRaw<{ query_port: number; name: string | null; player_names: string }[]>`
        SELECT g.query_port, s.name, s.player_names FROM game_server_search s
        JOIN game_server g ON g.id = s.game_server_id ORDER BY g.query_port`;
    expect(await search()).toEqual([
      { query_port: 1, name: "Dust Town", player_names: "alice\nbob" },
      { query_port: 3, name: null, player_names: "carol" },
    ]);
    const indexes = await t.db.$queryRaw<{ indexname: string }[]>`
      SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%gin_trgm_ops%' ORDER BY indexname`;
    expect(indexes.map((i) => i.indexname)).toEqual([
      "game_server_search_name_trgm_idx",
      "game_server_search_player_names_trgm_idx",
    ]);

    await t.db.$executeRawUnsafe(`
      UPDATE game_server SET name = 'New', player_names = '' WHERE query_port = 2;
      UPDATE game_server SET player_names = '' WHERE query_port = 3;
      INSERT INTO game_server (address, query_port, name) VALUES ('192.0.2.1', 4, 'Fresh');
      INSERT INTO game_server (address, query_port) VALUES ('192.0.2.1', 5)`);
    expect(await search()).toEqual([
      { query_port: 1, name: "Dust Town", player_names: "alice\nbob" },
      { query_port: 2, name: "New", player_names: "" },
      { query_port: 4, name: "Fresh", player_names: "" },
    ]);
    await t.db.$executeRawUnsafe("DELETE FROM game_server WHERE query_port = 1");
    expect((await search()).map((s) => s.query_port)).toEqual([2, 4]);
  });
});

describe("migration 20261128000000_game_server_sort_keys", () => {
  const MIGRATION = "20261128000000_game_server_sort_keys";
  const before = beforeMigration(MIGRATION);

  it("gives every existing server its LAST_SEEN and PING sort keys on game_server_sort and keeps them in step", async () => {
    const t = before.db();
    await t.db.$executeRawUnsafe(`
      INSERT INTO game_server (address, query_port, last_answered_at, ping_ms) VALUES
        ('192.0.2.1', 1, '2026-11-01T10:00:00Z', 40), ('192.0.2.1', 2, NULL, NULL)`);
    expect(await before.apply()).toMatchObject({ applied: [MIGRATION] });
    const keys = () =>
      t.db.$queryRaw<{ query_port: number; last_seen: string; ping_key: number }[]>`
        SELECT g.query_port, to_char(k.last_seen_key AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS last_seen, k.ping_key
        FROM game_server_sort k JOIN game_server g ON g.id = k.game_server_id ORDER BY g.query_port`;
    expect(await keys()).toEqual([
      { query_port: 1, last_seen: "2026-11-01 10:00", ping_key: 40 },
      { query_port: 2, last_seen: "1970-01-01 00:00", ping_key: 32767 },
    ]);
    // Neither column is indexed on game_server any more: an answer's update can be heap-only.
    const [perCrawl] = await t.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_indexes
      WHERE tablename = 'game_server' AND (indexdef LIKE '%last_answered_at%' OR indexdef LIKE '%ping_ms%')`;
    expect(perCrawl?.n).toBe(0);

    await t.db.$executeRawUnsafe(`
      UPDATE game_server SET ping_ms = 12, last_answered_at = '2026-11-02T08:30:00Z' WHERE query_port = 2;
      INSERT INTO game_server (address, query_port, ping_ms) VALUES ('192.0.2.1', 3, 7)`);
    expect(await keys()).toEqual([
      { query_port: 1, last_seen: "2026-11-01 10:00", ping_key: 40 },
      { query_port: 2, last_seen: "2026-11-02 08:30", ping_key: 12 },
      { query_port: 3, last_seen: "1970-01-01 00:00", ping_key: 7 },
    ]);
    await t.db.$executeRawUnsafe("DELETE FROM game_server WHERE query_port = 1");
    expect((await keys()).map((k) => k.query_port)).toEqual([2, 3]);
  });
});

describe("migration 20261206000000_game_server_answer_lz4", () => {
  const MIGRATION = "20261206000000_game_server_answer_lz4";
  const before = beforeMigration(MIGRATION);
  /** Rules and players as large as a real answer's, and as repetitive: compressed when written. */
  const bigAnswer = (seed: number): string =>
    `rules = (SELECT jsonb_agg(jsonb_build_object('name', 'sv_rule_' || i, 'value', (i * ${seed}) % 7)) FROM generate_series(1, 300) i),
     player_list = (SELECT jsonb_agg(jsonb_build_object('name', 'player ' || i, 'score', i, 'durationSeconds', i * ${seed})) FROM generate_series(1, 64) i)`;

  it("compresses the answer's large values with LZ4 from then on, and keeps the values written before readable", async () => {
    const t = before.db();
    await t.db.$executeRawUnsafe(
      `INSERT INTO game_server (address, query_port) VALUES ('192.0.2.1', 1), ('192.0.2.1', 2)`,
    );
    await t.db.$executeRawUnsafe(`UPDATE game_server SET ${bigAnswer(3)}`);
    const written = await t.db.$queryRaw<
      { rules: unknown }[]
    >`SELECT rules FROM game_server ORDER BY query_port`;
    expect(await answerCompression(t.db, 1)).toEqual({ rules: "pglz", player_list: "pglz" });

    expect(await before.apply()).toMatchObject({ applied: [MIGRATION] });
    const method = (await serverHasLz4(t.db)) ? "lz4" : "pglz";
    const methods = await t.db.$queryRaw<{ attname: string; method: string }[]>`
      SELECT attname, CASE attcompression WHEN 'l' THEN 'lz4' WHEN 'p' THEN 'pglz' ELSE 'default' END AS method
      FROM pg_attribute WHERE attrelid = 'game_server'::regclass
        AND attname IN ('rules', 'player_list', 'raw', 'player_names') ORDER BY attname`;
    expect(methods).toEqual(
      ["player_list", "player_names", "raw", "rules"].map((attname) => ({
        attname,
        method: method === "lz4" ? "lz4" : "default",
      })),
    );
    // Nothing rewritten: the old values stay as they were, and read back the same.
    expect(await answerCompression(t.db, 1)).toEqual({ rules: "pglz", player_list: "pglz" });
    expect(
      await t.db.$queryRaw<{ rules: unknown }[]>`SELECT rules FROM game_server ORDER BY query_port`,
    ).toEqual(written);

    // The next answer that changes them writes them with the new method.
    await t.db.$executeRawUnsafe(`UPDATE game_server SET ${bigAnswer(5)} WHERE query_port = 2`);
    expect(await answerCompression(t.db, 2)).toEqual({ rules: method, player_list: method });
    expect(await answerCompression(t.db, 1)).toEqual({ rules: "pglz", player_list: "pglz" });
    const [rules] = await t.db.$queryRaw<{ n: number; v: string }[]>`
      SELECT jsonb_array_length(rules)::int AS n, rules->299->>'value' AS v FROM game_server WHERE query_port = 2`;
    expect(rules).toEqual({ n: 300, v: String((300 * 5) % 7) });
  });
});

describe("migration 20261207000000_player_name_arrivals", () => {
  const MIGRATION = "20261207000000_player_name_arrivals";
  const before = beforeMigration(MIGRATION);

  it("moves player names to a table of arrivals, keeps names alone in game_server_search, and keeps both in step", async () => {
    const t = before.db();
    await t.db.$executeRawUnsafe(`
      INSERT INTO game_server (address, query_port, name, player_names) VALUES
        ('192.0.2.1', 1, 'Dust Town', E'alice\\nbob'), ('192.0.2.1', 2, 'Empty', ''),
        ('192.0.2.1', 3, NULL, 'carol'), ('192.0.2.1', 4, NULL, '')`);
    expect(await before.apply()).toMatchObject({ applied: [MIGRATION] });
    const names = () =>
      t.db.$queryRaw<{ query_port: number; name: string }[]>`
        SELECT g.query_port, s.name FROM game_server_search s
        JOIN game_server g ON g.id = s.game_server_id ORDER BY g.query_port`;
    const arrivals = () =>
      t.db.$queryRaw<{ query_port: number; names: string }[]>`
        SELECT g.query_port, p.names FROM game_server_player_search p
        JOIN game_server g ON g.id = p.game_server_id ORDER BY g.query_port, p.ctid`;
    expect(await names()).toEqual([
      { query_port: 1, name: "Dust Town" },
      { query_port: 2, name: "Empty" },
    ]);
    expect(await arrivals()).toEqual([
      { query_port: 1, names: "alice\nbob" },
      { query_port: 3, names: "carol" },
    ]);
    const indexes = await t.db.$queryRaw<{ indexname: string }[]>`
      SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%gin_trgm_ops%' ORDER BY indexname`;
    expect(indexes.map((i) => i.indexname)).toEqual([
      "game_server_player_search_names_trgm_idx",
      "game_server_search_name_trgm_idx",
    ]);

    await t.db.$executeRawUnsafe(`
      UPDATE game_server SET player_names = E'bob\\ndave\\nerin' WHERE query_port = 1;
      UPDATE game_server SET name = 'Renamed' WHERE query_port = 2;
      UPDATE game_server SET name = NULL WHERE query_port = 1;
      UPDATE game_server SET player_names = '' WHERE query_port = 3;
      INSERT INTO game_server (address, query_port, name, player_names) VALUES ('192.0.2.1', 5, 'Fresh', 'frank')`);
    expect(await names()).toEqual([
      { query_port: 2, name: "Renamed" },
      { query_port: 5, name: "Fresh" },
    ]);
    expect(await arrivals()).toEqual([
      { query_port: 1, names: "alice\nbob" },
      { query_port: 1, names: "dave\nerin" },
      { query_port: 3, names: "carol" },
      { query_port: 5, names: "frank" },
    ]);
    await t.db.$executeRawUnsafe("DELETE FROM game_server WHERE query_port IN (1, 5)");
    expect((await arrivals()).map((a) => a.query_port)).toEqual([3]);
  });
});

describe("migration 20261207100000_player_arrivals_old_list_once", () => {
  const MIGRATION = "20261207100000_player_arrivals_old_list_once";
  const before = beforeMigration(MIGRATION);

  it("keeps writing exactly the names that arrive, with the old list split once", async () => {
    const t = before.db();
    const crowd = Array.from({ length: 40 }, (_, i) => `player${i}`);
    await t.db.$executeRawUnsafe(
      `INSERT INTO game_server (address, query_port, name, player_names) VALUES
        ('192.0.2.1', 1, 'Crowded', $1), ('192.0.2.1', 2, 'Small', E'bobby\\ncarol')`,
      crowd.join("\n"),
    );
    expect(await before.apply()).toMatchObject({ applied: [MIGRATION] });
    const arrivals = () =>
      t.db.$queryRaw<{ query_port: number; names: string }[]>`
        SELECT g.query_port, p.names FROM game_server_player_search p
        JOIN game_server g ON g.id = p.game_server_id ORDER BY g.query_port, p.ctid`;

    // One left and two came (one of them twice); a name inside an old one ("bob" in "bobby") is new; players
    // who only left write nothing; a list emptied and filled again counts every name as arrived.
    const next = [...crowd.slice(1), "newcomer", "dave", "dave"];
    await t.db.$executeRawUnsafe(
      "UPDATE game_server SET player_names = $1 WHERE query_port = 1",
      next.join("\n"),
    );
    await t.db.$executeRawUnsafe(`
      UPDATE game_server SET player_names = E'bob\\nbobby\\ncarol' WHERE query_port = 2;
      UPDATE game_server SET player_names = 'bobby' WHERE query_port = 2;
      UPDATE game_server SET player_names = '' WHERE query_port = 2;
      UPDATE game_server SET player_names = 'carol' WHERE query_port = 2`);
    expect(await arrivals()).toEqual([
      { query_port: 1, names: crowd.join("\n") },
      { query_port: 1, names: "newcomer\ndave\ndave" },
      { query_port: 2, names: "bobby\ncarol" },
      { query_port: 2, names: "bob" },
      { query_port: 2, names: "carol" },
    ]);
  });
});
