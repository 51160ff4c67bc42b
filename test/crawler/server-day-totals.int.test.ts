/**
 * The roll-up keeps server_day's day totals by difference (history-store.ts): after any sequence of crawls re-rolling
 * any of a day's hours, every row's totals equal what its 24 slots give (server-day-totals.ts). Small domains (a few
 * servers, player counts 0-4, two maps, '' and none) make ties, extremes held by one slot, and top maps that change
 * hands common.
 */
import fc from "fast-check";
import { rollupRange } from "../../src/crawler/store/history-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import { SERVER_DAY_TOTALS_DRIFT_SQL } from "../../src/crawler/store/server-day-totals";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

// Each of the property's runs rolls an hour up after each of its up to 12 steps; on a loaded machine that is seconds.
jest.setTimeout(300_000);

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
const SERVERS = 3;
const HOURS = 3;

const sampleArb = fc.record({
  online: fc.boolean(),
  players: fc.integer({ min: 0, max: 4 }),
  bots: fc.option(fc.integer({ min: 0, max: 2 })),
  map: fc.constantFrom<string | null>("de_a", "de_b", "", null),
});
/**
 * A crawl (the hour it falls in and, per server, its sample or none: not listed that crawl), or an earlier crawl's
 * samples gone (the `which`-th crawl so far): an hour re-rolled with fewer samples moves its slots both ways, which
 * new samples alone never do (a slot's minimum only falls, its maximum and online count only rise).
 */
const stepArb = fc.oneof(
  fc.record({
    kind: fc.constant("crawl" as const),
    hour: fc.integer({ min: 0, max: HOURS - 1 }),
    samples: fc.array(fc.option(sampleArb, { freq: 4 }), {
      minLength: SERVERS,
      maxLength: SERVERS,
    }),
  }),
  fc.record({ kind: fc.constant("drop" as const), which: fc.nat() }),
);

describe("server_day totals kept by difference", () => {
  let t: TestDatabase;
  let ids: number[];
  const day0 = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS);

  beforeAll(async () => {
    t = await createTestDatabase();
    ids = [];
    for (let i = 0; i < SERVERS; i++)
      ids.push(
        Number(
          (await t.db.gameServer.create({ data: { address: "127.0.0.1", queryPort: 27015 + i } }))
            .id,
        ),
      );
    await ensureSamplePartition(t.db, day0);
  });
  afterAll(async () => t.drop());

  async function drift(): Promise<number> {
    const [row] = await t.db.$queryRawUnsafe<{ n: bigint }[]>(SERVER_DAY_TOTALS_DRIFT_SQL);
    return Number(row?.n);
  }

  it("equal the totals recomputed from the slots after every roll-up", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 12 }), async (steps) => {
        await t.db.$executeRawUnsafe("TRUNCATE server_sample, server_day, population_rollup");
        /** The hour of each crawl so far, by crawl id - 1. */
        const crawlHours: number[] = [];
        for (const step of steps) {
          let hourOfDay: number;
          if (step.kind === "drop") {
            if (crawlHours.length === 0) continue;
            const crawlId = (step.which % crawlHours.length) + 1;
            await t.db.$executeRaw`DELETE FROM server_sample WHERE crawl_id = ${crawlId}`;
            hourOfDay = crawlHours[crawlId - 1] ?? 0;
          } else {
            crawlHours.push(step.hour);
            const crawlId = crawlHours.length;
            // Every crawl of the run at its own instant of its hour.
            const crawlAt = new Date(day0.getTime() + step.hour * HOUR_MS + crawlId * 60_000);
            for (const [i, s] of step.samples.entries()) {
              if (s === null) continue;
              await t.db.$executeRaw`
                INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map)
                VALUES (${ids[i]}, ${crawlAt}, ${crawlId}, ${s.online}, ${s.online ? s.players : 0},
                  ${s.online ? s.bots : null}, 4, ${s.online ? s.map : null})`;
            }
            hourOfDay = step.hour;
          }
          const hour = new Date(day0.getTime() + hourOfDay * HOUR_MS);
          await rollupRange(t.db, hour, hour);
          expect(await drift()).toBe(0);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("counts a row whose totals left its slots", async () => {
    // The check itself: a row set by hand against its slots is found.
    await t.db.$executeRawUnsafe("TRUNCATE server_sample, server_day, population_rollup");
    await t.db.$executeRaw`
      INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map)
      VALUES (${ids[0]}, ${day0}, 1, true, 3, 0, 4, 'de_a')`;
    await rollupRange(t.db, day0, day0);
    expect(await drift()).toBe(0);
    await t.db.$executeRawUnsafe("UPDATE server_day SET top_map = 'de_b'");
    expect(await drift()).toBe(1);
  });
});
