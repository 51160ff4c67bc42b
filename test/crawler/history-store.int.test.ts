/**
 * The crawler's history writes (rollups, retention), checked through the reads the API uses
 * (src/history/). Which resolution a request gets is the API's plan: test/graphql/history*.
 */
import { applyRetention, rollupRange } from "../../src/crawler/store/history-store";
import { ensureSamplePartition, listSamplePartitions } from "../../src/crawler/store/partitions";
import { readPopulation } from "../../src/history/population";
import {
  mapTimeline,
  readServerHistories,
  type SeriesResolution,
} from "../../src/history/server-history";
import type { Db } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const HOUR = 3600_000;
const DAY = 24 * HOUR;

async function readServerHistory(
  db: Db,
  id: number,
  o: { from: Date; to: Date; resolution: SeriesResolution },
) {
  return { points: (await readServerHistories(db, [id], o)).get(id) ?? [] };
}

describe("history store", () => {
  let t: TestDatabase;
  let a: number;
  let b: number;
  // Yesterday 00:00 UTC: two whole days of samples fit in the raw window.
  const day0 = new Date(Math.floor(Date.now() / DAY) * DAY - DAY);

  beforeAll(async () => {
    t = await createTestDatabase();
    a = Number(
      (
        await t.db.gameServer.create({
          data: { address: "127.0.0.1", queryPort: 1, appId: 730, folder: "csgo", region: 3 },
        })
      ).id,
    );
    b = Number(
      (
        await t.db.gameServer.create({
          data: { address: "127.0.0.1", queryPort: 2, appId: 730, folder: "csgo", region: 1 },
        })
      ).id,
    );
    await t.db.gameServer.create({
      data: { address: "127.0.0.1", queryPort: 3, appId: 730, suspectedFake: true },
    });
    // 12 crawls an hour for 3 hours (00:00-03:00). a: online, players = hour*10 + k, map de_dust2 then de_inferno at hour 2.
    // b: online only in even crawls with 4 players.
    let crawlId = 1;
    for (let h = 0; h < 3; h++) {
      for (let k = 0; k < 12; k++) {
        const at = new Date(day0.getTime() + h * HOUR + k * 300_000);
        await ensureSamplePartition(t.db, at);
        const bOnline = k % 2 === 0;
        await t.db.$executeRaw`
          INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms) VALUES
          (${a}, ${at}, ${crawlId}, true, ${h * 10 + k}, 1, 32, ${h === 2 ? "de_inferno" : "de_dust2"}, 20),
          (${b}, ${at}, ${crawlId}, ${bOnline}, ${bOnline ? 4 : 0}, NULL, ${bOnline ? 10 : 0}, ${bOnline ? "cs_office" : null}, NULL)`;
        crawlId++;
      }
    }
    await rollupRange(t.db, day0, new Date(day0.getTime() + 3 * HOUR - 1));
    // Re-rolling changes nothing.
    await rollupRange(t.db, day0, new Date(day0.getTime() + 3 * HOUR - 1));
  });
  afterAll(async () => t.drop());

  const range = { from: day0, to: new Date(day0.getTime() + 3 * HOUR) };

  it("serves raw samples within the window", async () => {
    const { points } = await readServerHistory(t.db, a, { ...range, resolution: "RAW" });
    expect(points).toHaveLength(36);
    expect(points[0]).toMatchObject({
      samples: 1,
      onlineShare: 1,
      playersAvg: 0,
      maxPlayers: 32,
      map: "de_dust2",
      pingMs: 20,
    });
  });

  it("rolls up hours per server into 24-slot arrays", async () => {
    const { points } = await readServerHistory(t.db, b, { ...range, resolution: "HOUR" });
    expect(points.map((p) => p.at.getTime() - day0.getTime())).toEqual([0, HOUR, 2 * HOUR]);
    expect(points[0]).toMatchObject({
      samples: 12,
      onlineShare: 0.5,
      playersMin: 4,
      playersMax: 4,
      playersAvg: 2,
      map: "cs_office",
    });
    const ha = (await readServerHistory(t.db, a, { ...range, resolution: "HOUR" })).points;
    expect(ha.map((p) => [p.playersMin, p.playersMax, p.map])).toEqual([
      [0, 11, "de_dust2"],
      [10, 21, "de_dust2"],
      [20, 31, "de_inferno"],
    ]);
    expect(mapTimeline(ha, HOUR).map((s) => s.map)).toEqual(["de_dust2", "de_inferno"]);
  });

  it("keeps day totals, and reads many servers in one go", async () => {
    const series = await readServerHistories(t.db, [a, b], {
      from: day0,
      to: new Date(day0.getTime() + DAY),
      resolution: "DAY",
    });
    expect(series.get(a)).toEqual([
      expect.objectContaining({
        samples: 36,
        onlineShare: 1,
        playersMin: 0,
        playersMax: 31,
        map: "de_dust2",
      }),
    ]);
    expect(series.get(b)![0]).toMatchObject({ samples: 36, onlineShare: 0.5 });
    const [row] = await t.db.$queryRaw<
      { h: (number | null)[] }[]
    >`SELECT h_samples AS h FROM server_day WHERE game_server_id = ${a}`;
    expect(row!.h).toHaveLength(24);
    expect(row!.h.slice(0, 4)).toEqual([12, 12, 12, null]);
    expect(await t.db.serverDay.findFirstOrThrow({ where: { gameServerId: a } })).toMatchObject({
      samples: 36,
      topMap: "de_dust2",
    });
  });

  it("aggregates population per game, map and region, leaving suspected fakes out", async () => {
    const allPoints = await readPopulation(
      t.db,
      { dimension: "ALL" },
      { ...range, resolution: "HOUR" },
    );
    expect(allPoints).toHaveLength(3);
    // hour 0: a averages 5.5 players, b 2; both count as servers online a:1 + b:0.5.
    expect(allPoints[0]).toMatchObject({ serversSeen: 2, serversOnline: 1.5, playersPeak: 14 });
    expect(allPoints[0]!.playersAvg).toBeCloseTo(7.5, 5);
    const appPoints = await readPopulation(
      t.db,
      { dimension: "APP", key: "730" },
      { ...range, resolution: "HOUR" },
    );
    expect(appPoints[0]!.serversSeen).toBe(2);
    const mapPoints = await readPopulation(
      t.db,
      { dimension: "MAP", key: "de_inferno" },
      { ...range, resolution: "HOUR" },
    );
    expect(mapPoints.map((p) => p.at.getTime() - day0.getTime())).toEqual([2 * HOUR]);
    const regionPoints = await readPopulation(
      t.db,
      { dimension: "REGION", key: "1" },
      { ...range, resolution: "HOUR" },
    );
    expect(regionPoints[0]!.playersAvg).toBeCloseTo(2, 5);
    const daysPoints = await readPopulation(
      t.db,
      { dimension: "ALL" },
      { from: day0, to: new Date(day0.getTime() + DAY), resolution: "DAY" },
    );
    expect(daysPoints).toHaveLength(1);
    expect(daysPoints[0]!.playersPeak).toBe(34);
  });

  it("drops raw partitions past the window but keeps the rollups", async () => {
    const before = await listSamplePartitions(t.db);
    expect(before.length).toBeGreaterThan(0);
    const result = await applyRetention(t.db, {
      rawDays: 0,
      rollupDays: 0,
      now: new Date(day0.getTime() + 2 * DAY),
    });
    expect(result.droppedPartitions).toEqual(before.map((p) => p.name));
    expect(await t.db.serverSample.count()).toBe(0);
    const { points } = await readServerHistory(t.db, a, { ...range, resolution: "HOUR" });
    expect(points).toHaveLength(3);
  });
});
