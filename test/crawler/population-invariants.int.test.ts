/**
 * Population rollups keep their invariants (docs/storage.md, "Population rollups"): random crawls of several
 * sources, some servers listed by two of them and some suspected fakes, written as crawl and sample rows into
 * a real database, rolled up by the real rollupRange and read back by readPopulation. At every resolution,
 * for every key, with and without suspected fakes, min <= avg <= peak; the hourly ALL buckets match a model
 * computed here from the same samples (one moment = one crawl instant of any source, every server counted
 * once with its latest sample), and every hourly MAP and FOLDER bucket counts the servers seen under it (a server that
 * changed map in the hour under each of its maps).
 */
import fc from "fast-check";
import { openCrawl } from "../../src/crawler/store/crawl-store";
import { rollupRange } from "../../src/crawler/store/history-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import {
  readPopulation,
  type PopulationDimensionName,
  type RollupResolution,
} from "../../src/history/population";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

jest.setTimeout(300_000);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Yesterday 23:00 UTC: crawls of the next hours straddle a day boundary, inside the raw window.
const START = new Date(Math.floor(Date.now() / DAY) * DAY - HOUR);
const MAPS = ["de_dust2", "cs_office", "ctf_2fort"];
const FOLDERS = ["cstrike", "tf"];

interface SampleDraw {
  /** Index into the source's servers. */
  server: number;
  online: boolean;
  players: number;
  map: number;
}

interface CrawlDraw {
  source: number;
  /** Minutes after START. */
  minute: number;
  samples: SampleDraw[];
}

interface Scenario {
  servers: { folder: number; sources: number[]; fake?: boolean }[];
  crawls: CrawlDraw[];
}

const SOURCES = 3;

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .array(
    fc.record({
      folder: fc.nat({ max: FOLDERS.length - 1 }),
      sources: fc.uniqueArray(fc.nat({ max: SOURCES - 1 }), { minLength: 1, maxLength: 2 }),
      fake: fc.boolean(),
    }),
    { minLength: 1, maxLength: 8 },
  )
  .chain((servers) =>
    fc.record({
      servers: fc.constant(servers),
      crawls: fc.array(
        fc.record({
          source: fc.nat({ max: SOURCES - 1 }),
          // Over three hours (two UTC days); several crawls may share a minute.
          minute: fc.nat({ max: 179 }),
          samples: fc.array(
            fc.record({
              server: fc.nat({ max: servers.length - 1 }),
              online: fc.boolean(),
              players: fc.nat({ max: 64 }),
              map: fc.nat({ max: MAPS.length - 1 }),
            }),
            { maxLength: 8 },
          ),
        }),
        { minLength: 1, maxLength: 14 },
      ),
    }),
  );

interface ModelSample {
  server: number;
  at: number;
  crawl: number;
  players: number;
  map: string | null;
}

/** Servers seen in `hour` (epoch ms) under a MAP or FOLDER key: distinct servers `counted` keeps with a sample there. */
function modelSeen(
  samples: ModelSample[],
  scenario: Scenario,
  hour: number,
  k: { dimension: string; key: string },
  counted: (server: number) => boolean,
): number {
  const under = (s: ModelSample): boolean =>
    k.dimension === "MAP" ? s.map === k.key : FOLDERS[scenario.servers[s.server]!.folder] === k.key;
  return new Set(
    samples
      .filter((s) => Math.floor(s.at / HOUR) * HOUR === hour && counted(s.server) && under(s))
      .map((s) => s.server),
  ).size;
}

/** Hourly ALL buckets computed from the samples as docs/storage.md defines them, over the servers `counted` keeps. */
function modelAllHours(
  samples: ModelSample[],
  counted: (server: number) => boolean,
): Map<number, { min: number; avg: number; peak: number }> {
  const byHour = new Map<number, ModelSample[]>();
  for (const s of samples) {
    const h = Math.floor(s.at / HOUR) * HOUR;
    byHour.set(h, [...(byHour.get(h) ?? []), s]);
  }
  const out = new Map<number, { min: number; avg: number; peak: number }>();
  for (const [h, all] of byHour) {
    // Moments are the crawl instants of every sample in the hour, counted servers or not.
    const moments = [...new Set(all.map((s) => s.at))].sort((a, b) => a - b);
    const list = all.filter((s) => counted(s.server));
    if (list.length === 0) continue;
    const servers = [...new Set(list.map((s) => s.server))];
    const totals = moments.map((t) =>
      servers.reduce((sum, id) => {
        const own = list
          .filter((s) => s.server === id)
          .sort((a, b) => a.at - b.at || a.crawl - b.crawl);
        const current = own.filter((s) => s.at <= t).pop() ?? own[0]!;
        return sum + current.players;
      }, 0),
    );
    out.set(h, {
      min: Math.min(...totals),
      avg: totals.reduce((a, b) => a + b, 0) / totals.length,
      peak: Math.max(...totals),
    });
  }
  return out;
}

describe("population rollup invariants", () => {
  let t: TestDatabase;
  let sourceIds: number[];

  beforeAll(async () => {
    t = await createTestDatabase();
    sourceIds = [];
    for (let i = 0; i < SOURCES; i++)
      sourceIds.push(
        (
          await t.db.masterSource.create({
            data: { name: `source-${i}`, kind: "ADDRESS_LIST", host: "x" },
          })
        ).id,
      );
    for (let d = 0; d < 2; d++)
      await ensureSamplePartition(t.db, new Date(START.getTime() + d * DAY));
  });
  afterAll(async () => t?.drop());

  /** Writes the scenario as crawls and samples, rolls it up, and returns what the model needs. */
  async function load(s: Scenario, runTag: string): Promise<ModelSample[]> {
    await t.db
      .$executeRaw`TRUNCATE game_server, crawl, server_sample, server_day, population_rollup CASCADE`;
    const ids: number[] = [];
    for (const [i, server] of s.servers.entries()) {
      const row = await t.db.gameServer.create({
        data: {
          address: "192.0.2.1",
          queryPort: 20000 + i,
          folder: FOLDERS[server.folder]!,
          appId: 100 + server.folder,
          region: server.folder,
          sourceId: sourceIds[server.sources[0]!]!,
          suspectedFake: server.fake ?? false,
        },
      });
      ids.push(Number(row.id));
    }
    const written: ModelSample[] = [];
    for (const [n, c] of s.crawls.entries()) {
      const at = new Date(START.getTime() + c.minute * MINUTE);
      const crawl = await openCrawl(t.db, {
        key: `${runTag}-${n}`,
        sourceId: sourceIds[c.source]!,
        startedAt: at,
        splits: [],
      });
      // A crawl samples only servers its source lists, each once.
      const mine = new Map<number, SampleDraw>();
      for (const d of c.samples) {
        const server = s.servers[d.server]!;
        if (server.sources.includes(c.source)) mine.set(d.server, d);
      }
      for (const [server, d] of mine) {
        const players = d.online ? d.players : 0;
        await t.db.$executeRaw`
          INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms)
          VALUES (${ids[server]!}, ${at}, ${crawl.id}, ${d.online}, ${players}, ${d.online ? 1 : null}, 64, ${d.online ? MAPS[d.map]! : null}, NULL)`;
        written.push({
          server,
          at: at.getTime(),
          crawl: crawl.id,
          players,
          map: d.online ? MAPS[d.map]! : null,
        });
      }
    }
    await rollupRange(t.db, START, new Date(START.getTime() + 3 * HOUR - 1));
    return written;
  }

  async function keysOf(
    resolution: RollupResolution,
  ): Promise<{ dimension: PopulationDimensionName; key: string }[]> {
    return t.db.$queryRaw<{ dimension: PopulationDimensionName; key: string }[]>`
      SELECT DISTINCT dimension::text AS dimension, key FROM population_rollup WHERE resolution = ${resolution}::"RollupResolution"`;
  }

  it("min <= avg <= peak at every resolution and key, with and without suspected fakes, and the hourly ALL bucket and the servers seen per map and folder match the model", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const samples = await load(scenario, `run${run++}`);
        const range = { from: START, to: new Date(START.getTime() + 3 * HOUR) };
        for (const withSuspectedFakes of [false, true]) {
          for (const resolution of ["HOUR", "DAY"] as const) {
            for (const k of await keysOf(resolution)) {
              for (const p of await readPopulation(t.db, k, {
                ...range,
                resolution,
                withSuspectedFakes,
              })) {
                const where = `${resolution} ${k.dimension} '${k.key}' fakes ${withSuspectedFakes} at ${p.at.toISOString()}: ${JSON.stringify(p)}`;
                if (!(p.playersMin <= p.playersAvg && p.playersAvg <= p.playersPeak))
                  throw new Error(`min <= avg <= peak broken, ${where}`);
                if (p.playersMin < 0 || p.serversOnline > p.serversSeen + 1e-6)
                  throw new Error(`counts out of range, ${where}`);
              }
            }
          }
          const model = modelAllHours(
            samples,
            (server) => withSuspectedFakes || !scenario.servers[server]!.fake,
          );
          const stored = await readPopulation(
            t.db,
            { dimension: "ALL" },
            { ...range, resolution: "HOUR", withSuspectedFakes },
          );
          expect(stored.map((p) => p.at.getTime())).toEqual(
            [...model.keys()].sort((a, b) => a - b),
          );
          for (const p of stored) {
            const m = model.get(p.at.getTime())!;
            expect({ min: p.playersMin, peak: p.playersPeak }).toEqual({
              min: m.min,
              peak: m.peak,
            });
            expect(p.playersAvg).toBeCloseTo(m.avg, 3);
          }
          const counted = (server: number): boolean =>
            withSuspectedFakes || !scenario.servers[server]!.fake;
          for (const k of await keysOf("HOUR")) {
            if (k.dimension !== "MAP" && k.dimension !== "FOLDER") continue;
            for (const p of await readPopulation(t.db, k, {
              ...range,
              resolution: "HOUR",
              withSuspectedFakes,
            }))
              expect({ ...k, at: p.at, seen: p.serversSeen }).toEqual({
                ...k,
                at: p.at,
                seen: modelSeen(samples, scenario, p.at.getTime(), k, counted),
              });
          }
        }
      }),
      { numRuns: 25 },
    );
  });

  it("regression: a suspected fake seen on a map only in a sample a later crawl of the same instant outranks still counts as seen there with fakes", async () => {
    // fast-check's counterexample (seed 1619100632): the fake's cs_office sample covers no moment, so the rollup
    // wrote no with-fakes row for cs_office and the read fell back to the row without fakes (1 server seen).
    const servers = [
      { folder: 1, sources: [0], fake: true },
      { folder: 0, sources: [0], fake: false },
    ];
    const crawls: CrawlDraw[] = [
      { source: 0, minute: 87, samples: [{ server: 0, online: true, players: 0, map: 1 }] },
      {
        source: 0,
        minute: 87,
        samples: [
          { server: 0, online: false, players: 0, map: 0 },
          { server: 1, online: true, players: 0, map: 1 },
        ],
      },
    ];
    await load({ servers, crawls }, "same-instant-fake");
    const hour = new Date(START.getTime() + HOUR);
    const read = async (withSuspectedFakes: boolean): Promise<number | undefined> =>
      (
        await readPopulation(
          t.db,
          { dimension: "MAP", key: "cs_office" },
          {
            from: hour,
            to: new Date(hour.getTime() + HOUR),
            resolution: "HOUR",
            withSuspectedFakes,
          },
        )
      )[0]?.serversSeen;
    expect(await read(false)).toBe(1);
    expect(await read(true)).toBe(2);
  });

  it("regression: two sources crawling different servers at different instants add up in the ALL peak", async () => {
    // Each source lists half the fleet and crawls every 5 minutes, the second 2 minutes after the first.
    // The peak of one source's crawl (3 × 40) fell below the average across sources (6 × 40), as seen live
    // with ALL playersPeak 196,613 below playersAvg 242,523.
    const servers = Array.from({ length: 6 }, (_, i) => ({ folder: 0, sources: [i < 3 ? 0 : 1] }));
    const crawls: CrawlDraw[] = [];
    for (let k = 0; k < 12; k++) {
      for (const source of [0, 1]) {
        crawls.push({
          source,
          minute: 60 + k * 5 + source * 2,
          samples: servers.map((_, i) => ({ server: i, online: true, players: 40, map: 0 })),
        });
      }
    }
    await load({ servers, crawls }, "regression");
    const hour = new Date(START.getTime() + HOUR);
    const [p] = await readPopulation(
      t.db,
      { dimension: "ALL" },
      { from: hour, to: new Date(hour.getTime() + HOUR), resolution: "HOUR" },
    );
    expect(p).toMatchObject({
      playersAvg: 240,
      playersMin: 240,
      playersPeak: 240,
      serversOnline: 6,
      serversSeen: 6,
    });
    const [d] = await readPopulation(
      t.db,
      { dimension: "ALL" },
      { from: hour, to: new Date(hour.getTime() + DAY), resolution: "DAY" },
    );
    expect(d!.playersPeak).toBeGreaterThanOrEqual(d!.playersAvg);
  });
});
