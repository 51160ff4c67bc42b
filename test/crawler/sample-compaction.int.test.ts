/**
 * Raw samples compacted into one row per server per day (docs/storage.md, "Raw samples"): the reads and
 * the rollups give the same answers before and after, a retried write of a compacted sample adds nothing,
 * and a late sample of a compacted hour is kept.
 */
import { inTransaction } from "../../src/crawler/store/batch-write";
import { applyRetention, compactSamples, rollupRange } from "../../src/crawler/store/history-store";
import { ensureSamplePartition, listSamplePartitions } from "../../src/crawler/store/partitions";
import { insertSamples, type SampleRow } from "../../src/crawler/store/sample-store";
import { readServerHistories } from "../../src/history/server-history";
import { pgPoolOf, type Db } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const HOUR = 3600_000;
const DAY = 24 * HOUR;

interface Crawl {
  id: number;
  at: Date;
  samples: SampleRow[];
}

async function write(db: Db, c: Crawl): Promise<number> {
  return inTransaction(pgPoolOf(db), (tx) => insertSamples(tx, c.id, c.at, c.samples));
}

// Loaded machine: a database per suite and ~150 statements before the first test.
jest.setTimeout(120_000);

describe("raw sample compaction", () => {
  let t: TestDatabase;
  let ids: number[];
  const crawls: Crawl[] = [];
  // Yesterday 00:00 UTC: inside the raw window, and every hour of it is over.
  const day0 = new Date(Math.floor(Date.now() / DAY) * DAY - DAY);
  const range = { from: day0, to: new Date(day0.getTime() + 3 * HOUR) };

  async function snapshot(): Promise<unknown> {
    const raw = await readServerHistories(t.db, ids, { ...range, resolution: "RAW" });
    const days = await t.db.$queryRaw<unknown[]>`
      SELECT game_server_id::int AS id, day::text, samples, online, players_min, players_max, players_sum, bots_max, top_map,
        h_samples::text, h_online::text, h_players_min::text, h_players_max::text, h_players_sum::text, h_bots_max::text, h_map::text
      FROM server_day ORDER BY 1, 2`;
    const population = await t.db.$queryRaw<unknown[]>`
      SELECT resolution::text, dimension::text, key, with_suspected_fakes, bucket_at, servers_online::text, servers_seen,
        players_avg::text, players_peak, players_min, bots_avg::text
      FROM population_rollup ORDER BY 1, 2, 3, 4, 5`;
    return { raw: [...raw.entries()], days, population };
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    ids = [];
    for (const [i, fake] of [false, false, true].entries())
      ids.push(
        Number(
          (
            await t.db.gameServer.create({
              data: {
                address: "127.0.0.1",
                queryPort: 27015 + i,
                appId: 730,
                folder: "csgo",
                region: 1,
                suspectedFake: fake,
              },
            })
          ).id,
        ),
      );
    // Source A crawls every server every 5 minutes from 00:00:00.123; source B crawls the second
    // server only, every 20 minutes from 00:07:30.456 (instants of its own), for three hours.
    let crawlId = 1;
    for (let k = 0; k < 36; k++) {
      const at = new Date(day0.getTime() + k * 300_000 + 123);
      crawls.push({
        id: crawlId++,
        at,
        samples: ids.map((id, i) => {
          const online = (k + i) % 4 !== 0;
          return {
            id,
            online,
            players: online ? (k * 3 + i * 7) % 25 : 0,
            bots: online && i === 0 ? k % 3 : null,
            max_players: online ? 24 + i : 0,
            map: online ? (k < 18 ? "de_dust2" : "de_inferno") : null,
            ping_ms: online ? 20 + i : null,
          };
        }),
      });
    }
    for (let k = 0; k < 9; k++)
      crawls.push({
        id: crawlId++,
        at: new Date(day0.getTime() + k * 1_200_000 + 450_456),
        samples: [
          {
            id: ids[1]!,
            online: true,
            players: 30 + k,
            bots: 0,
            max_players: 40,
            map: "cs_office",
            ping_ms: 5,
          },
        ],
      });
    for (const c of crawls) {
      await ensureSamplePartition(t.db, c.at);
      expect(await write(t.db, c)).toBe(c.samples.length);
    }
    await rollupRange(t.db, range.from, new Date(range.to.getTime() - 1));
  });
  afterAll(async () => t.drop());

  it("keeps every sample, the RAW history and the rollups as they were, and retried writes stay no-ops", async () => {
    const before = await snapshot();
    const total = crawls.reduce((n, c) => n + c.samples.length, 0);
    expect(await t.db.serverSample.count()).toBe(total);

    const hours = (await listSamplePartitions(t.db))
      .filter((p) => p.to <= range.to)
      .map((p) => p.name);
    expect(hours).toHaveLength(3);
    expect(await compactSamples(t.db, range.to)).toEqual(hours);
    expect(await t.db.serverSample.count()).toBe(0);
    expect(
      await t.db.$queryRaw<{ n: number; samples: number }[]>`
        SELECT count(*)::int AS n, sum(cardinality(crawl_id))::int AS samples FROM server_sample_day`,
    ).toEqual([{ n: 3, samples: total }]);

    await rollupRange(t.db, range.from, new Date(range.to.getTime() - 1));
    expect(await snapshot()).toEqual(before);

    // A retried batch of a compacted crawl writes nothing.
    for (const c of crawls) expect(await write(t.db, c)).toBe(0);
    expect(await t.db.serverSample.count()).toBe(0);
    expect(await snapshot()).toEqual(before);
  });

  it("keeps a sample written after its hour was compacted, once", async () => {
    const late: Crawl = {
      id: 1000,
      at: new Date(day0.getTime() + HOUR + 1_000_789),
      samples: [
        { id: ids[0]!, online: true, players: 9, bots: 1, max_players: 24, map: "x", ping_ms: 1 },
      ],
    };
    // Its crawl started in the hour, before the compaction: no partition is made for it again.
    expect(await write(t.db, late)).toBe(1);
    expect(await write(t.db, late)).toBe(0);
    const raw = async () =>
      (await readServerHistories(t.db, [ids[0]!], { ...range, resolution: "RAW" })).get(ids[0]!)!;
    const withLate = await raw();
    expect(withLate).toHaveLength(37);
    expect(withLate.filter((p) => p.at.getTime() === late.at.getTime())).toHaveLength(1);
    expect(withLate.map((p) => p.at.getTime())).toEqual(
      withLate.map((p) => p.at.getTime()).sort((x, y) => x - y),
    );
    // It waited in the DEFAULT partition; the next compaction appends it to the day row.
    expect(await compactSamples(t.db, range.to)).toEqual([]);
    expect(await t.db.serverSample.count()).toBe(0);
    expect(await raw()).toEqual(withLate);
    expect(await write(t.db, late)).toBe(0);
  });

  it("drops the day rows with the raw window and keeps the rollups", async () => {
    const result = await applyRetention(t.db, {
      rawDays: 0,
      rollupDays: 0,
      now: new Date(day0.getTime() + 2 * DAY),
    });
    expect(result.droppedPartitions).toContain(
      `server_sample_day_p${day0.toISOString().slice(0, 10).replace(/-/g, "")}`,
    );
    expect(await listSamplePartitions(t.db)).toEqual([]);
    expect(await t.db.$queryRaw<unknown[]>`SELECT 1 FROM server_sample_day`).toEqual([]);
    const hourly = await readServerHistories(t.db, ids, { ...range, resolution: "HOUR" });
    expect(hourly.get(ids[0]!)).toHaveLength(3);
  });
});
