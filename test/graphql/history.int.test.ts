/**
 * History and aggregates over real HTTP: a server's series at every resolution (raw samples inside the
 * window; hourly slots and days, from the crawler's own rollups, outside it), the map timeline,
 * population, games and maps, and the SQL statement count of a page of 100 servers with 30-day history.
 */
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createCountingDb, startTestApi, type CountingDb, type TestApi } from "./helpers/api";
import {
  DAY,
  HOUR,
  hourlyMap,
  hourlyPlayers,
  OFFLINE_HOUR,
  seedHistory,
  seedServers,
  type FleetServer,
  type SeededIndex,
} from "./helpers/seed";

const FLEET = 120;
const WITH_HISTORY = 12;
const HISTORY_DAYS = 32;
let tdb: TestDatabase;
let counting: CountingDb;
let api: TestApi;
let seed: SeededIndex;
let historyFrom: Date;

beforeAll(async () => {
  tdb = await createTestDatabase("gsindex_gql_history");
  counting = createCountingDb(tdb.url);
  seed = await seedServers(counting.db, FLEET);
  historyFrom = new Date(Math.floor(seed.now.getTime() / DAY) * DAY - HISTORY_DAYS * DAY);
  const servers = seed.servers
    .slice(0, WITH_HISTORY)
    .map((s) => ({ i: s.i, id: seed.ids[s.i] as number }));
  await seedHistory(counting.db, seed.crawlId, servers, historyFrom, seed.now, 7);
  api = await startTestApi({ db: counting.db });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await counting?.db.$disconnect();
  await tdb?.drop();
});

type Point = {
  at: string;
  samples: number;
  playersMin: number | null;
  playersAvg: number;
  playersMax: number | null;
  bots: number | null;
  onlineShare: number;
  map: string | null;
};
type History = {
  resolution: string;
  bucketSeconds: number;
  from: string;
  to: string;
  points: Point[];
  mapTimeline: { map: string; from: string; to: string }[];
};

const HISTORY = `query($id: Int!, $from: DateTimeISO, $to: DateTimeISO, $resolution: HistoryResolution) {
  server(id: $id) { history(from: $from, to: $to, resolution: $resolution) {
    resolution bucketSeconds from to
    points { at samples playersMin playersAvg playersMax bots onlineShare map }
    mapTimeline { map from to }
  } }
}`;

const I = 2; // the fleet server whose history the single-server tests read
const idOf = (i: number): number => seed.ids[i] as number;
const dayStart = (msAgo: number): number => Math.floor((seed.now.getTime() - msAgo) / DAY) * DAY;

async function history(vars: Record<string, unknown>): Promise<History> {
  const res = await api.gql<{ server: { history: History } }>(HISTORY, { id: idOf(I), ...vars });
  expect(res.errors).toBeUndefined();
  return res.data?.server.history as History;
}

const expectedHourPoint = (i: number, h: number) =>
  h === OFFLINE_HOUR
    ? { samples: 3, playersMin: null, playersMax: null, playersAvg: 0, onlineShare: 0, map: null }
    : {
        samples: 3,
        playersMin: hourlyPlayers(i, h),
        playersMax: hourlyPlayers(i, h),
        playersAvg: hourlyPlayers(i, h),
        onlineShare: 1,
        map: hourlyMap(h),
      };

describe("GameServer.history", () => {
  it("RAW: one point per sample inside the raw window", async () => {
    const to = new Date(Math.floor(seed.now.getTime() / HOUR) * HOUR - HOUR);
    const from = new Date(to.getTime() - 6 * HOUR);
    const h = await history({ from: from.toISOString(), to: to.toISOString(), resolution: "RAW" });
    expect(h).toMatchObject({ resolution: "RAW", bucketSeconds: 0 });
    expect(h.points).toHaveLength(18);
    for (const p of h.points) {
      const hour = new Date(p.at).getUTCHours();
      expect(p).toMatchObject({
        samples: 1,
        ...(hour === OFFLINE_HOUR
          ? { onlineShare: 0, map: null }
          : { playersAvg: hourlyPlayers(I, hour), onlineShare: 1, map: hourlyMap(hour) }),
      });
    }
  });

  it("HOUR: 24 points a day from the rollups, even where the raw samples are gone", async () => {
    const from = new Date(dayStart(20 * DAY));
    const h = await history({
      from: from.toISOString(),
      to: new Date(from.getTime() + DAY).toISOString(),
      resolution: "HOUR",
    });
    expect(h).toMatchObject({ resolution: "HOUR", bucketSeconds: 3600 });
    expect(h.points).toHaveLength(24);
    h.points.forEach((p, hour) => {
      expect(p.at).toBe(new Date(from.getTime() + hour * HOUR).toISOString());
      expect(p).toMatchObject(expectedHourPoint(I, hour));
    });
    // Map timeline: 6-hour blocks, the offline hour (no map) bridged.
    expect(
      h.mapTimeline.map((s) => [
        s.map,
        (Date.parse(s.from) - from.getTime()) / HOUR,
        (Date.parse(s.to) - from.getTime()) / HOUR,
      ]),
    ).toEqual([
      ["de_dust2", 0, 6],
      ["de_inferno", 6, 12],
      ["de_dust2", 12, 18],
      ["de_inferno", 18, 24],
    ]);
  });

  it("DAY: one point a day with the day totals", async () => {
    const from = new Date(dayStart(25 * DAY));
    const h = await history({
      from: from.toISOString(),
      to: new Date(from.getTime() + 10 * DAY).toISOString(),
      resolution: "DAY",
    });
    expect(h).toMatchObject({ resolution: "DAY", bucketSeconds: 86400 });
    expect(h.points).toHaveLength(10);
    const online = Array.from({ length: 24 }, (_, hour) => hour).filter(
      (hour) => hour !== OFFLINE_HOUR,
    );
    const ps = online.map((hour) => hourlyPlayers(I, hour));
    for (const p of h.points) {
      expect(p.samples).toBe(72);
      expect(p.onlineShare).toBeCloseTo(69 / 72, 5);
      expect(p.playersMin).toBe(Math.min(...ps));
      expect(p.playersMax).toBe(Math.max(...ps));
      expect(p.playersAvg).toBeCloseTo((3 * ps.reduce((a, b) => a + b, 0)) / 72, 5);
    }
  });

  it("AUTO over 30 days: a few hundred multi-hour buckets, averaged over their samples", async () => {
    const to = new Date(dayStart(0));
    const from = new Date(to.getTime() - 30 * DAY);
    const h = await history({ from: from.toISOString(), to: to.toISOString() });
    expect(h.resolution).toBe("HOUR");
    expect(h.bucketSeconds).toBe(3 * 3600);
    expect(h.points).toHaveLength(240);
    for (const p of h.points.slice(0, 16)) {
      const first = new Date(p.at).getUTCHours();
      const hours = [first, first + 1, first + 2];
      const avg =
        hours.reduce((a, hour) => a + (hour === OFFLINE_HOUR ? 0 : hourlyPlayers(I, hour)), 0) / 3;
      expect(p.samples).toBe(9);
      expect(p.playersAvg).toBeCloseTo(avg, 5);
      expect(p.onlineShare).toBeCloseTo(hours.includes(OFFLINE_HOUR) ? 2 / 3 : 1, 5);
    }
  });

  it("AUTO over a year: days grouped so the series stays short", async () => {
    const h = await history({
      from: new Date(seed.now.getTime() - 365 * DAY).toISOString(),
      to: seed.now.toISOString(),
    });
    expect(h.resolution).toBe("DAY");
    expect(h.bucketSeconds).toBe(2 * 86400);
    expect(h.points.length).toBeLessThanOrEqual(HISTORY_DAYS / 2 + 2);
    expect(h.points.length).toBeGreaterThan(10);
  });

  it("AUTO over a few hours: raw samples", async () => {
    const h = await history({ from: new Date(seed.now.getTime() - 3 * HOUR).toISOString() });
    expect(h.resolution).toBe("RAW");
    expect(h.points.length).toBeGreaterThanOrEqual(8);
  });

  it("refuses RAW before the window and picks a resolution for AUTO", async () => {
    const old = await api.gql(HISTORY, {
      id: idOf(I),
      from: new Date(Date.now() - 30 * DAY).toISOString(),
      to: new Date().toISOString(),
      resolution: "RAW",
    });
    expect(old.errors?.[0]?.message).toMatch(/RAW history is kept for 7 days/);
    const threeHours = {
      from: new Date(seed.now.getTime() - 3 * HOUR).toISOString(),
      to: seed.now.toISOString(),
      resolution: "AUTO",
    };
    expect((await history(threeHours)).resolution).toBe("RAW");
    expect(
      (
        await history({
          from: new Date(Date.now() - 10 * DAY).toISOString(),
          to: new Date().toISOString(),
          resolution: "AUTO",
        })
      ).resolution,
    ).toBe("HOUR");
    expect(
      (
        await history({
          from: new Date(Date.now() - 365 * DAY).toISOString(),
          to: new Date().toISOString(),
          resolution: "AUTO",
        })
      ).resolution,
    ).toBe("DAY");
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    [
      "RAW older than the raw window",
      {
        from: new Date(Date.now() - 10 * DAY).toISOString(),
        to: new Date(Date.now() - 9 * DAY).toISOString(),
        resolution: "RAW",
      },
      "from",
    ],
    [
      "RAW over too long a range",
      { from: new Date(Date.now() - 5 * DAY).toISOString(), resolution: "RAW" },
      "from",
    ],
    [
      "from after to",
      {
        from: new Date(Date.now() - DAY).toISOString(),
        to: new Date(Date.now() - 2 * DAY).toISOString(),
      },
      "from",
    ],
    ["HOUR over years", { from: "2001-01-01T00:00:00Z", resolution: "HOUR" }, "from"],
  ];
  for (const [name, vars, argumentName] of bad) {
    it(`${name} → BAD_USER_INPUT naming ${argumentName}`, async () => {
      const res = await api.gql(HISTORY, { id: idOf(I), ...vars });
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName });
    });
  }

  it("a time that is not one is refused before anything runs", async () => {
    const res = await api.gql(HISTORY, { id: idOf(I), from: "yesterday" });
    expect(res.errors?.[0]?.extensions?.["code"]).toBe("BAD_USER_INPUT");
  });
});

describe("population, games and maps", () => {
  const POP = `query($filter: PopulationFilterInput, $from: DateTimeISO, $to: DateTimeISO, $resolution: HistoryResolution) {
    population(filter: $filter, from: $from, to: $to, resolution: $resolution) { resolution bucketSeconds dimension key points { at serversOnline serversSeen playersAvg playersPeak botsAvg } }
  }`;
  type Pop = {
    population: {
      resolution: string;
      bucketSeconds: number;
      dimension: string;
      key: string;
      points: Array<{
        at: string;
        serversOnline: number;
        serversSeen: number;
        playersAvg: number;
        playersPeak: number;
      }>;
    };
  };
  const counted = (pred: (s: FleetServer) => boolean) =>
    seed.servers
      .slice(0, WITH_HISTORY)
      .filter((s) => !s.suspectedFake && !s.isRelay && !s.hidden && pred(s));

  it("an app over one day, hourly: servers online and players summed over its servers", async () => {
    const from = new Date(dayStart(15 * DAY));
    const res = await api.gql<Pop>(POP, {
      filter: { appId: 440 },
      from: from.toISOString(),
      to: new Date(from.getTime() + DAY).toISOString(),
      resolution: "HOUR",
    });
    expect(res.errors).toBeUndefined();
    const pop = res.data?.population as Pop["population"];
    expect(pop).toMatchObject({ resolution: "HOUR", dimension: "APP", key: "440" });
    expect(pop.points).toHaveLength(24);
    const tf = counted((s) => s.appId === 440);
    pop.points.forEach((p, hour) => {
      const players =
        hour === OFFLINE_HOUR ? 0 : tf.reduce((a, s) => a + hourlyPlayers(s.i, hour), 0);
      expect(p.serversOnline).toBeCloseTo(hour === OFFLINE_HOUR ? 0 : tf.length, 4);
      expect(p.serversSeen).toBe(tf.length);
      expect(p.playersAvg).toBeCloseTo(players, 3);
      expect(p.playersPeak).toBe(players);
    });
  });

  it("everything over 30 days, daily", async () => {
    const to = new Date(dayStart(DAY));
    const res = await api.gql<Pop>(POP, {
      from: new Date(to.getTime() - 30 * DAY).toISOString(),
      to: to.toISOString(),
      resolution: "DAY",
    });
    const pop = res.data?.population as Pop["population"];
    expect(pop).toMatchObject({ resolution: "DAY", dimension: "ALL", key: "" });
    expect(pop.points).toHaveLength(30);
    const all = counted(() => true);
    for (const p of pop.points) expect(p.serversOnline).toBeCloseTo((all.length * 23) / 24, 3);
  });

  it("a map and a region; AUTO picks the rollup; RAW and two dimensions at once are refused", async () => {
    const map = await api.gql<Pop>(POP, {
      filter: { map: "de_dust2" },
      from: new Date(seed.now.getTime() - 2 * DAY).toISOString(),
    });
    expect(map.data?.population).toMatchObject({
      dimension: "MAP",
      key: "de_dust2",
      resolution: "HOUR",
    });
    expect(map.data?.population.points.length).toBeGreaterThan(0);
    const region = await api.gql<Pop>(POP, {
      filter: { region: 3 },
      from: new Date(seed.now.getTime() - 300 * DAY).toISOString(),
    });
    expect(region.data?.population).toMatchObject({
      dimension: "REGION",
      key: "3",
      resolution: "DAY",
    });
    expect((await api.gql(POP, { resolution: "RAW" })).errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "resolution",
    });
    expect(
      (await api.gql(POP, { filter: { appId: 10, map: "de_dust2" } })).errors?.[0]?.extensions,
    ).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "filter.map" });
  });

  it("games: by current players, with server counts", async () => {
    const res = await api.gql<{
      games: Array<{
        appId: number;
        folder: string;
        name: string;
        players: number;
        servers: number;
      }>;
    }>("{ games { appId folder name players servers } }");
    const online = seed.servers.filter(
      (s) => s.status === "ONLINE" && !s.hidden && !s.suspectedFake && !s.isRelay,
    );
    const of = (appId: number) => online.filter((s) => s.appId === appId);
    expect(res.data?.games).toEqual(
      [
        {
          appId: 10,
          folder: "cstrike",
          name: "Counter-Strike",
          players: of(10).reduce((a, s) => a + s.players, 0),
          servers: of(10).length,
        },
        {
          appId: 440,
          folder: "tf",
          name: "Team Fortress",
          players: of(440).reduce((a, s) => a + s.players, 0),
          servers: of(440).length,
        },
      ].sort((a, b) => b.players - a.players),
    );
  });

  it("maps of a game", async () => {
    const res = await api.gql<{ maps: Array<{ map: string; players: number; servers: number }> }>(
      '{ maps(folder: "tf") { map players servers } }',
    );
    const online = seed.servers.filter(
      (s) =>
        s.status === "ONLINE" && !s.hidden && !s.suspectedFake && !s.isRelay && s.folder === "tf",
    );
    const expected = ["ctf_2fort", "pl_upward"]
      .map((map) => ({
        map,
        players: online.filter((s) => s.map === map).reduce((a, s) => a + s.players, 0),
        servers: online.filter((s) => s.map === map).length,
      }))
      .sort((a, b) => b.players - a.players);
    expect(res.data?.maps).toEqual(expected);
    expect((await api.gql("{ maps(first: 0) { map } }")).errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "first",
    });
  });
});

describe("no N+1", () => {
  const PAGE = `query($first: Int!, $from: DateTimeISO!) {
    servers(first: $first) { edges { node { id name players playerList { name score } rules { name value } source { name }
      history(from: $from) { resolution points { at playersAvg onlineShare } mapTimeline { map from to } } } } }
  }`;

  it("a page of 100 servers with players and 30-day history is a handful of SQL statements, whatever the page size", async () => {
    const from = new Date(seed.now.getTime() - 30 * DAY).toISOString();
    counting.reset();
    const small = await api.gql<{ servers: { edges: unknown[] } }>(PAGE, { first: 5, from });
    expect(small.errors).toBeUndefined();
    const fewServers = counting.statements().length;

    counting.reset();
    const big = await api.gql<{
      servers: { edges: Array<{ node: { id: number; history: { points: unknown[] } } }> };
    }>(PAGE, { first: 100, from });
    expect(big.errors).toBeUndefined();
    const statements = counting.statements();
    expect(big.data?.servers.edges).toHaveLength(100);
    const withHistory =
      big.data?.servers.edges.filter((e) => e.node.history.points.length > 0) ?? [];
    expect(withHistory.length).toBeGreaterThan(0);
    // the page, one history read for the whole page, one source read
    expect(statements.length).toBeLessThanOrEqual(5);
    expect(statements.length).toBe(fewServers);
  });
});
