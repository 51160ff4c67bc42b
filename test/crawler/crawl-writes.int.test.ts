/**
 * How many times a crawl writes each row (issue 14, "the index's own cost"): rows are counted by a trigger
 * of the test database on every UPDATE of game_server, game_server_search and server_day, TOAST rewrites by
 * the chunk ids of game_server's TOAST relation.
 */
import { finishCrawl, listRuns, openCrawl } from "../../src/crawler/store/crawl-store";
import { rollupRange } from "../../src/crawler/store/history-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import {
  recordListing,
  writeBatchOutcomes,
  type ListingRow,
} from "../../src/crawler/store/server-store";
import type { StatusRule } from "../../src/protocol";
import { createDb } from "../../src/shared/db";
import {
  answerCompression,
  createTestDatabase,
  serverHasLz4,
  type TestDatabase,
} from "../helpers/db";
import { listingRow } from "../helpers/listing-row";
import { makeStatus } from "../helpers/status";
import { encodeAnswer } from "../../src/crawler/store/answer-row";

const row = listingRow;

/** Rules too big for the row (over 2 kB once compressed): stored in game_server's TOAST relation. */
function bigRules(seed: number): StatusRule[] {
  let x = seed;
  const next = (): string => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x.toString(36);
  };
  return Array.from({ length: 300 }, (_, i) => ({
    name: `rule_${i}`,
    value: `${next()}${next()}${next()}`,
  }));
}

describe("crawl writes per server", () => {
  let t: TestDatabase;
  let sourceId: number;

  beforeAll(async () => {
    t = await createTestDatabase();
    sourceId = (
      await t.db.masterSource.create({
        data: { name: "src", kind: "ADDRESS_LIST", host: "127.0.0.1" },
      })
    ).id;
    await t.db.$executeRawUnsafe("CREATE TABLE row_updates (tbl text PRIMARY KEY, n int NOT NULL)");
    await t.db.$executeRawUnsafe(`
      CREATE FUNCTION count_row_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO row_updates VALUES (TG_TABLE_NAME, 1) ON CONFLICT (tbl) DO UPDATE SET n = row_updates.n + 1;
        RETURN NULL;
      END $$`);
    for (const table of ["game_server", "server_day", "game_server_search"])
      await t.db.$executeRawUnsafe(
        `CREATE TRIGGER count_updates AFTER UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION count_row_update()`,
      );
  });
  afterAll(async () => t.drop());

  async function updates(table: string): Promise<number> {
    const rows = await t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT n FROM row_updates WHERE tbl = $1",
      table,
    );
    return rows[0]?.n ?? 0;
  }
  const resetCounts = async (): Promise<void> =>
    void (await t.db.$executeRawUnsafe("TRUNCATE row_updates"));

  async function openOne(key: string) {
    const c = await openCrawl(t.db, {
      key,
      sourceId,
      startedAt: new Date(),
      splits: [{ region: 3, split: "" }],
    });
    await ensureSamplePartition(t.db, c.startedAt);
    const [run] = await listRuns(t.db, c.id);
    return { c, runId: run!.id };
  }

  async function list(
    crawl: Awaited<ReturnType<typeof openOne>>,
    rows: ListingRow[],
    deferListedAt: boolean,
  ): Promise<string[]> {
    const listing = await recordListing(t.db, {
      crawlId: crawl.c.id,
      crawlAt: crawl.c.startedAt,
      runId: crawl.runId,
      sourceId,
      label: "r3-0",
      batchSize: 10,
      partial: false,
      error: null,
      rows,
      deferListedAt,
    });
    return listing.batchKeys;
  }

  async function query(
    crawl: Awaited<ReturnType<typeof openOne>>,
    batchKeys: string[],
    rules: StatusRule[],
    fails: (id: number) => boolean = () => false,
    raw: Record<string, string> | null = null,
    held = false,
  ): Promise<void> {
    for (const batchKey of batchKeys) {
      const batch = await t.db.crawlBatch.findUniqueOrThrow({
        where: { crawlId_batchKey: { crawlId: crawl.c.id, batchKey } },
      });
      await writeBatchOutcomes(t.db, {
        crawlId: crawl.c.id,
        crawlAt: crawl.c.startedAt,
        batchKey,
        offlineAfterFailures: 2,
        outcomes: batch.serverIds.map(Number).map((id) =>
          fails(id)
            ? { serverId: id, kind: "failed" as const, code: "TIMEOUT" }
            : held
              ? {
                  serverId: id,
                  kind: "answered" as const,
                  encoded: encodeAnswer({
                    id,
                    status: makeStatus({ name: `s${id}`, rules, raw }),
                    pingMs: 5,
                  }),
                }
              : {
                  serverId: id,
                  kind: "answered" as const,
                  status: makeStatus({ name: `s${id}`, rules, raw }),
                  pingMs: 5,
                },
        ),
      });
    }
  }

  const close = (crawlId: number) =>
    finishCrawl(t.db, crawlId, { delistAfterMissedCrawls: 2, fakePortsPerIp: 0 });

  it("a listing that changes nothing in a row leaves it to the batch's write: one update per server per crawl", async () => {
    const ports = [27015, 27016, 27017, 27018];
    const first = await openOne("w1");
    const everyOther = (id: number): boolean => id % 2 === 0;
    await query(
      first,
      await list(
        first,
        ports.map((p) => row(p)),
        true,
      ),
      [],
      everyOther,
    );
    await close(first.c.id);

    const second = await openOne("w2");
    await resetCounts();
    const keys = await list(
      second,
      ports.map((p) => row(p)),
      true,
    );
    expect(keys).toEqual(["r3-0-0"]);
    expect(await updates("game_server")).toBe(0);
    await query(second, keys, [], everyOther);
    expect(await updates("game_server")).toBe(ports.length);
    const [run] = await t.db.crawlRun.findMany({ where: { crawlId: second.c.id } });
    const servers = await t.db.gameServer.findMany();
    // The time the listing listed them, as if the listing had written it.
    expect(servers.map((s) => s.lastListedAt?.getTime())).toEqual(
      ports.map(() => run!.finishedAt!.getTime()),
    );
    expect((await close(second.c.id)).missed).toBe(0);

    // A listing that changes a row (its game port) writes it; the rest wait for their batch.
    const third = await openOne("w3");
    await resetCounts();
    await list(
      third,
      [row(27015, { gamePort: 27005 }), ...ports.slice(1).map((p) => row(p))],
      true,
    );
    expect(await updates("game_server")).toBe(1);
    expect((await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27015 } })).gamePort).toBe(
      27005,
    );
    await query(third, ["r3-0-0"], []);
    await close(third.c.id);

    // A server left out of a listing still misses it, deferred or not.
    const fourth = await openOne("w4");
    await query(
      fourth,
      await list(
        fourth,
        ports.slice(1).map((p) => row(p)),
        true,
      ),
      [],
    );
    const result = await close(fourth.c.id);
    expect(result.missed).toBe(1);
    expect(
      (await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27015 } })).missedListings,
    ).toBe(1);

    // Without deferral (a listing-only crawl) the listing writes every row it lists.
    const fifth = await openOne("w5");
    await resetCounts();
    await list(
      fifth,
      ports.map((p) => row(p)),
      false,
    );
    expect(await updates("game_server")).toBe(ports.length);
    const [run5] = await t.db.crawlRun.findMany({ where: { crawlId: fifth.c.id } });
    expect((await t.db.gameServer.findMany()).map((s) => s.lastListedAt?.getTime())).toEqual(
      ports.map(() => run5!.finishedAt!.getTime()),
    );
  });

  it("an answer writes the server's name for search only when it changes, and of its players only those who arrived", async () => {
    await t.db.$executeRawUnsafe("DELETE FROM game_server");
    const names = async (): Promise<string[]> =>
      (
        await t.db.$queryRawUnsafe<{ name: string }[]>(
          "SELECT s.name FROM game_server_search s JOIN game_server g ON g.id = s.game_server_id ORDER BY g.query_port",
        )
      ).map((r) => r.name);
    // Each server's rows of arrivals, oldest first.
    const arrivals = async (): Promise<string[][]> => {
      const rows = await t.db.$queryRawUnsafe<{ query_port: number; names: string }[]>(
        `SELECT g.query_port, p.names FROM game_server_player_search p JOIN game_server g ON g.id = p.game_server_id
        ORDER BY g.query_port, p.ctid`,
      );
      return [27201, 27202].map((port) =>
        rows.filter((r) => r.query_port === port).map((r) => r.names),
      );
    };
    const answer = async (key: string, players: string[], name = (id: number) => `s${id}`) => {
      const c = await openOne(key);
      const [batchKey] = await list(c, [row(27201), row(27202)], true);
      const batch = await t.db.crawlBatch.findUniqueOrThrow({
        where: { crawlId_batchKey: { crawlId: c.c.id, batchKey: batchKey! } },
      });
      await writeBatchOutcomes(t.db, {
        crawlId: c.c.id,
        crawlAt: c.c.startedAt,
        batchKey: batchKey!,
        offlineAfterFailures: 2,
        outcomes: batch.serverIds.map(Number).map((id) => ({
          serverId: id,
          kind: "answered" as const,
          status: makeStatus({
            name: name(id),
            players: players.length,
            playerList: players.map((name) => ({ name, score: 0, durationSeconds: 1 })),
          }),
          pingMs: id,
        })),
      });
      await close(c.c.id);
    };
    // A listing alone writes none: no name yet.
    const listed = await openOne("n0");
    await list(listed, [row(27201), row(27202)], true);
    await close(listed.c.id);
    expect(await names()).toEqual([]);
    expect(await arrivals()).toEqual([[], []]);

    await answer("n1", ["alice", "bob"]);
    const servers = await t.db.gameServer.findMany({ orderBy: { queryPort: "asc" } });
    expect(await names()).toEqual(servers.map((s) => `s${s.id}`));
    expect(await arrivals()).toEqual([["alice\nbob"], ["alice\nbob"]]);
    await resetCounts();
    await answer("n2", ["alice", "bob"]);
    expect(await updates("game_server")).toBe(2);
    expect(await updates("game_server_search")).toBe(0);
    expect(await arrivals()).toEqual([["alice\nbob"], ["alice\nbob"]]);
    // Bob left and carol came: carol's row alone; the name is not written again.
    await answer("n3", ["alice", "carol"]);
    expect(await updates("game_server_search")).toBe(0);
    expect(await arrivals()).toEqual([
      ["alice\nbob", "carol"],
      ["alice\nbob", "carol"],
    ]);
    // Everyone left: nothing to write.
    await answer("n4", []);
    expect((await arrivals()).map((a) => a.length)).toEqual([2, 2]);
    await answer("n5", [], (id) => `renamed ${id}`);
    expect(await updates("game_server_search")).toBe(2);
    expect(await names()).toEqual(servers.map((s) => `renamed ${s.id}`));
  });

  it("an answer with the same rules keeps their TOAST copy; new rules replace it", async () => {
    await t.db.$executeRawUnsafe("DELETE FROM game_server");
    const [toast] = await t.db.$queryRawUnsafe<{ name: string }[]>(
      "SELECT reltoastrelid::regclass::text AS name FROM pg_class WHERE relname = 'game_server'",
    );
    const chunks = async (): Promise<string[]> =>
      (
        await t.db.$queryRawUnsafe<{ id: string }[]>(
          `SELECT DISTINCT chunk_id::text AS id FROM ${toast!.name} ORDER BY 1`,
        )
      ).map((r) => r.id);
    const rules = bigRules(1);
    const a = await openOne("t1");
    await query(a, await list(a, [row(27101)], true), rules);
    const before = await chunks();
    expect(before.length).toBeGreaterThan(0);

    const b = await openOne("t2");
    await query(b, await list(b, [row(27101)], true), rules);
    expect(await chunks()).toEqual(before);
    const server = await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27101 } });
    expect(server.rules).toEqual(rules);

    const c = await openOne("t3");
    const changed = bigRules(2);
    await query(c, await list(c, [row(27101)], true), changed);
    expect(await chunks()).not.toEqual(before);
    expect((await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27101 } })).rules).toEqual(
      changed,
    );
  });

  it("an answer's rules are compressed with LZ4 where the server has it (migration 20261206000000_game_server_answer_lz4)", async () => {
    await t.db.$executeRawUnsafe("DELETE FROM game_server");
    // A Source server's rules: 300 cvars, 4 kB as JSON, repetitive enough to fit the row once compressed.
    const rules = Array.from({ length: 300 }, (_, i) => ({
      name: `sv_rule_${i}`,
      value: String(i % 7),
    }));
    const a = await openOne("z1");
    await query(a, await list(a, [row(27201)], true), rules);
    const method = (await serverHasLz4(t.db)) ? "lz4" : "pglz";
    expect((await answerCompression(t.db, 27201)).rules).toBe(method);
    expect((await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27201 } })).rules).toEqual(
      rules,
    );
  });

  it("an answer with the rules and raw values the row holds leaves them out of the write; new ones are written", async () => {
    await t.db.$executeRawUnsafe("DELETE FROM game_server");
    const stored = async () =>
      (
        await t.db.$queryRawUnsafe<{ rules: unknown; raw: unknown; digest: string | null }[]>(
          "SELECT rules, raw, rules_digest::text AS digest FROM game_server WHERE query_port = 27102",
        )
      )[0]!;
    // Changes the stored values behind the digest's back: a write that sends them puts them back.
    const tamper = (digest: string) =>
      t.db.$executeRawUnsafe(
        `UPDATE game_server SET rules = '[{"name":"tampered","value":"1"}]', raw = '{"tampered":"1"}',
          rules_digest = ${digest} WHERE query_port = 27102`,
      );
    const rules = bigRules(3);
    const raw = { sv_hostname: "legacy", g_gametype: "4" };
    const a = await openOne("d1");
    await query(a, await list(a, [row(27102)], true), rules, undefined, raw);
    const first = await stored();
    expect(first).toEqual({ rules, raw, digest: expect.stringMatching(/^-?\d+$/) });

    // The same answer again: neither rules nor raw are sent, so the tampered values stay.
    await tamper("rules_digest");
    const b = await openOne("d2");
    await query(b, await list(b, [row(27102)], true), rules, undefined, raw);
    expect(await stored()).toEqual({
      rules: [{ name: "tampered", value: "1" }],
      raw: { tampered: "1" },
      digest: first.digest,
    });

    // A row without a digest (every row before the migration) takes the answer's rules and raw values.
    await tamper("NULL");
    const c = await openOne("d3");
    await query(c, await list(c, [row(27102)], true), rules, undefined, raw);
    expect(await stored()).toEqual(first);

    // Changed rules, or changed raw values alone, are written with their new digest.
    const changed = bigRules(4);
    const d = await openOne("d4");
    await query(d, await list(d, [row(27102)], true), changed, undefined, raw);
    const second = await stored();
    expect(second.rules).toEqual(changed);
    expect(second.digest).not.toEqual(first.digest);
    const e = await openOne("d5");
    const rawChanged = { ...raw, g_gametype: "5" };
    await query(e, await list(e, [row(27102)], true), changed, undefined, rawChanged);
    const third = await stored();
    expect(third.raw).toEqual(rawChanged);
    expect(third.digest).not.toEqual(second.digest);
  });

  it("an answer its batch held encoded writes its rules as decoded, and keeps them for the same rules either way", async () => {
    await t.db.$executeRawUnsafe("DELETE FROM game_server");
    const stored = async () =>
      (
        await t.db.$queryRawUnsafe<{ rules: unknown; digest: string | null }[]>(
          "SELECT rules, rules_digest::text AS digest FROM game_server WHERE query_port = 27103",
        )
      )[0]!;
    const rules = [...bigRules(5), { name: "sv_\u0000nul", value: "x\u0000" }];
    const cleaned = rules.map((r) => ({
      name: r.name.replace("\u0000", ""),
      value: r.value.replace("\u0000", ""),
    }));
    const a = await openOne("h1");
    await query(a, await list(a, [row(27103)], true), rules, undefined, null, true);
    const first = await stored();
    expect(first.rules).toEqual(cleaned);

    // Decoded (a requery, or a batch before this change) or packed, the same rules are left out of the write.
    const tampered = '[{"name":"tampered","value":"1"}]';
    await t.db.$executeRawUnsafe(
      `UPDATE game_server SET rules = '${tampered}' WHERE query_port = 27103`,
    );
    const b = await openOne("h2");
    await query(b, await list(b, [row(27103)], true), cleaned, undefined, null, false);
    const c = await openOne("h3");
    await query(c, await list(c, [row(27103)], true), cleaned, undefined, null, true);
    expect(await stored()).toEqual({ rules: JSON.parse(tampered), digest: first.digest });

    const changed = bigRules(6);
    const d = await openOne("h4");
    await query(d, await list(d, [row(27103)], true), changed, undefined, null, true);
    expect((await stored()).rules).toEqual(changed);
  });

  it("rolling up an hour writes each server's day row once, its totals included", async () => {
    const day0 = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 86_400_000);
    const servers = await t.db.gameServer.findMany({ select: { id: true } });
    const [s1] = servers;
    const at = (h: number, m: number): Date =>
      new Date(day0.getTime() + h * 3_600_000 + m * 60_000);
    let crawlId = 1000;
    for (const [h, m, players, map] of [
      [1, 0, 3, "de_dust2"],
      [1, 30, 5, "de_dust2"],
      [4, 0, 9, "de_inferno"],
      [4, 10, 7, "de_inferno"],
      [4, 20, 1, "de_dust2"],
    ] as const) {
      await ensureSamplePartition(t.db, at(h, m));
      await t.db.$executeRaw`
        INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms)
        VALUES (${s1!.id}, ${at(h, m)}, ${crawlId++}, true, ${players}, 1, 32, ${map}, 20)`;
    }
    await rollupRange(t.db, at(1, 0), at(1, 59));
    await resetCounts();
    await rollupRange(t.db, at(4, 0), at(4, 59));
    expect(await updates("server_day")).toBe(1);
    await rollupRange(t.db, at(4, 0), at(4, 59));
    expect(await updates("server_day")).toBe(2);
    const [d] = await t.db.$queryRaw<
      {
        samples: number;
        online: number;
        players_min: number;
        players_max: number;
        players_sum: number;
        bots_max: number;
        top_map: string;
        h_samples: (number | null)[];
      }[]
    >`SELECT samples, online, players_min, players_max, players_sum, bots_max, top_map, h_samples
      FROM server_day WHERE game_server_id = ${s1!.id} AND day = ${day0}::date`;
    expect(d).toMatchObject({
      samples: 5,
      online: 5,
      players_min: 1,
      players_max: 9,
      players_sum: 25,
      bots_max: 1,
      // Hour 4's map (de_inferno, 3 online samples in its slot) against hour 1's (de_dust2, 2).
      top_map: "de_inferno",
    });
    expect(d!.h_samples).toEqual(
      Array.from({ length: 24 }, (_, i) => (i === 1 ? 2 : i === 4 ? 3 : null)),
    );
  });

  it("re-writing an answer is a heap-only update of game_server (no index entry); the sort keys follow on game_server_sort", async () => {
    // One connection for every statement of this test, so that its statistics can be flushed before each read.
    const one = createDb(t.url, { max: 1 });
    try {
      const counts = async (): Promise<{ updates: number; hot: number }> => {
        await one.$queryRawUnsafe("SELECT pg_stat_force_next_flush()::text");
        const [r] = await one.$queryRawUnsafe<{ u: number; h: number }[]>(
          "SELECT n_tup_upd::int AS u, n_tup_hot_upd::int AS h FROM pg_stat_user_tables WHERE relname = 'game_server'",
        );
        return { updates: r?.u ?? 0, hot: r?.h ?? 0 };
      };
      const ports = [28015, 28016, 28017, 28018];
      const crawlOnce = async (
        key: string,
        pingMs: number,
      ): Promise<{ updates: number; hot: number }> => {
        const c = await openCrawl(one, {
          key,
          sourceId,
          startedAt: new Date(),
          splits: [{ region: 3, split: "" }],
        });
        await ensureSamplePartition(one, c.startedAt);
        const [run] = await listRuns(one, c.id);
        const listing = await recordListing(one, {
          crawlId: c.id,
          crawlAt: c.startedAt,
          runId: run!.id,
          sourceId,
          label: "r3-0",
          batchSize: 1,
          partial: false,
          error: null,
          rows: ports.map((p) => row(p, { address: "127.0.0.9", ip: "127.0.0.9" })),
          deferListedAt: true,
        });
        const before = await counts();
        for (const batchKey of listing.batchKeys) {
          const batch = await one.crawlBatch.findUniqueOrThrow({
            where: { crawlId_batchKey: { crawlId: c.id, batchKey } },
          });
          await writeBatchOutcomes(one, {
            crawlId: c.id,
            crawlAt: c.startedAt,
            batchKey,
            offlineAfterFailures: 2,
            outcomes: batch.serverIds.map(Number).map((id) => ({
              serverId: id,
              kind: "answered" as const,
              status: makeStatus({ name: `hot${id}`, players: 3 }),
              pingMs,
            })),
          });
        }
        const after = await counts();
        return { updates: after.updates - before.updates, hot: after.hot - before.hot };
      };
      const sortKeys = () =>
        one.$queryRawUnsafe<{ same_seen: boolean; ping_key: number }[]>(
          `SELECT k.last_seen_key = g.last_answered_at AS same_seen, k.ping_key
           FROM game_server g JOIN game_server_sort k ON k.game_server_id = g.id
           WHERE g.address = '127.0.0.9' ORDER BY g.id`,
        );

      await crawlOnce("hot-1", 5);
      // Every answer sets last_answered_at, which the LAST_SEEN sort used to index on game_server.
      expect(await crawlOnce("hot-2", 5)).toEqual({ updates: 4, hot: 4 });
      expect(await sortKeys()).toEqual(ports.map(() => ({ same_seen: true, ping_key: 5 })));
      // A new ping (the PING sort's key) too.
      expect(await crawlOnce("hot-3", 9)).toEqual({ updates: 4, hot: 4 });
      expect(await sortKeys()).toEqual(ports.map(() => ({ same_seen: true, ping_key: 9 })));
    } finally {
      await one.$disconnect();
    }
  });
});
