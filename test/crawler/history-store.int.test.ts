import { applyRetention, mapTimeline, readPopulation, readServerHistories, readServerHistory, rollupRange } from '../../src/crawler/store/history-store';
import { ensureSamplePartition, listSamplePartitions } from '../../src/crawler/store/partitions';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('history store', () => {
  let t: TestDatabase;
  let a: number;
  let b: number;
  // Yesterday 00:00 UTC: two whole days of samples fit in the raw window.
  const day0 = new Date(Math.floor(Date.now() / DAY) * DAY - DAY);

  beforeAll(async () => {
    t = await createTestDatabase();
    a = Number((await t.db.gameServer.create({ data: { address: '127.0.0.1', queryPort: 1, appId: 730, folder: 'csgo', region: 3 } })).id);
    b = Number((await t.db.gameServer.create({ data: { address: '127.0.0.1', queryPort: 2, appId: 730, folder: 'csgo', region: 1 } })).id);
    await t.db.gameServer.create({ data: { address: '127.0.0.1', queryPort: 3, appId: 730, suspectedFake: true } });
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
          (${a}, ${at}, ${crawlId}, true, ${h * 10 + k}, 1, 32, ${h === 2 ? 'de_inferno' : 'de_dust2'}, 20),
          (${b}, ${at}, ${crawlId}, ${bOnline}, ${bOnline ? 4 : 0}, NULL, ${bOnline ? 10 : 0}, ${bOnline ? 'cs_office' : null}, NULL)`;
        crawlId++;
      }
    }
    await rollupRange(t.db, day0, new Date(day0.getTime() + 3 * HOUR - 1));
    // Re-rolling changes nothing.
    await rollupRange(t.db, day0, new Date(day0.getTime() + 3 * HOUR - 1));
  });
  afterAll(async () => t.drop());

  const range = { from: day0, to: new Date(day0.getTime() + 3 * HOUR), rawDays: 7 };

  it('serves raw samples within the window', async () => {
    const { resolution, points } = await readServerHistory(t.db, a, { ...range, resolution: 'RAW' });
    expect(resolution).toBe('RAW');
    expect(points).toHaveLength(36);
    expect(points[0]).toMatchObject({ samples: 1, onlineShare: 1, playersAvg: 0, maxPlayers: 32, map: 'de_dust2', pingMs: 20 });
  });

  it('rolls up hours per server into 24-slot arrays', async () => {
    const { points } = await readServerHistory(t.db, b, { ...range, resolution: 'HOUR' });
    expect(points.map((p) => p.at.getTime() - day0.getTime())).toEqual([0, HOUR, 2 * HOUR]);
    expect(points[0]).toMatchObject({ samples: 12, onlineShare: 0.5, playersMin: 4, playersMax: 4, playersAvg: 2, map: 'cs_office' });
    const ha = (await readServerHistory(t.db, a, { ...range, resolution: 'HOUR' })).points;
    expect(ha.map((p) => [p.playersMin, p.playersMax, p.map])).toEqual([[0, 11, 'de_dust2'], [10, 21, 'de_dust2'], [20, 31, 'de_inferno']]);
    expect(mapTimeline(ha, HOUR).map((s) => s.map)).toEqual(['de_dust2', 'de_inferno']);
  });

  it('keeps day totals, and reads many servers in one go', async () => {
    const { series } = await readServerHistories(t.db, [a, b], { from: day0, to: new Date(day0.getTime() + DAY), rawDays: 7, resolution: 'DAY' });
    expect(series.get(a)).toEqual([expect.objectContaining({ samples: 36, onlineShare: 1, playersMin: 0, playersMax: 31, map: 'de_dust2' })]);
    expect(series.get(b)![0]).toMatchObject({ samples: 36, onlineShare: 0.5 });
    const [row] = await t.db.$queryRaw<{ h: (number | null)[] }[]>`SELECT h_samples AS h FROM server_day WHERE game_server_id = ${a}`;
    expect(row!.h).toHaveLength(24);
    expect(row!.h.slice(0, 4)).toEqual([12, 12, 12, null]);
    expect(await t.db.serverDay.findFirstOrThrow({ where: { gameServerId: a } })).toMatchObject({ samples: 36, topMap: 'de_dust2' });
  });

  it('aggregates population per game, map and region, leaving suspected fakes out', async () => {
    const all = await readPopulation(t.db, { dimension: 'ALL' }, { ...range, resolution: 'HOUR' });
    expect(all.points).toHaveLength(3);
    // hour 0: a averages 5.5 players, b 2; both count as servers online a:1 + b:0.5.
    expect(all.points[0]).toMatchObject({ serversSeen: 2, serversOnline: 1.5, playersPeak: 14 });
    expect(all.points[0]!.playersAvg).toBeCloseTo(7.5, 5);
    const app = await readPopulation(t.db, { dimension: 'APP', key: '730' }, { ...range, resolution: 'HOUR' });
    expect(app.points[0]!.serversSeen).toBe(2);
    const map = await readPopulation(t.db, { dimension: 'MAP', key: 'de_inferno' }, { ...range, resolution: 'HOUR' });
    expect(map.points.map((p) => p.at.getTime() - day0.getTime())).toEqual([2 * HOUR]);
    const region = await readPopulation(t.db, { dimension: 'REGION', key: '1' }, { ...range, resolution: 'HOUR' });
    expect(region.points[0]!.playersAvg).toBeCloseTo(2, 5);
    const days = await readPopulation(t.db, { dimension: 'ALL' }, { from: day0, to: new Date(day0.getTime() + DAY), resolution: 'DAY' });
    expect(days.points).toHaveLength(1);
    expect(days.points[0]!.playersPeak).toBe(34);
  });

  it('refuses RAW before the window and picks a resolution for AUTO', async () => {
    await expect(readServerHistory(t.db, a, { from: new Date(Date.now() - 30 * DAY), to: new Date(), rawDays: 7, resolution: 'RAW' })).rejects.toThrow(/RAW history is kept for 7 days/);
    expect((await readServerHistory(t.db, a, { ...range, resolution: 'AUTO' })).resolution).toBe('RAW');
    expect((await readServerHistory(t.db, a, { from: new Date(Date.now() - 10 * DAY), to: new Date(), rawDays: 7, resolution: 'AUTO' })).resolution).toBe('HOUR');
    expect((await readServerHistory(t.db, a, { from: new Date(Date.now() - 365 * DAY), to: new Date(), rawDays: 7, resolution: 'AUTO' })).resolution).toBe('DAY');
  });

  it('drops raw partitions past the window but keeps the rollups', async () => {
    const before = await listSamplePartitions(t.db);
    expect(before.length).toBeGreaterThan(0);
    const result = await applyRetention(t.db, { rawDays: 0, rollupDays: 0, now: new Date(day0.getTime() + 2 * DAY) });
    expect(result.droppedPartitions).toEqual(before.map((p) => p.name));
    expect(await t.db.serverSample.count()).toBe(0);
    const { points } = await readServerHistory(t.db, a, { ...range, resolution: 'HOUR' });
    expect(points).toHaveLength(3);
  });
});
