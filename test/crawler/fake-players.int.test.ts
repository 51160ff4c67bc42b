/**
 * Inflated player counts end to end (docs/fake-players.md): a simulated fleet with the faults in it (an INFO
 * count far above the PLAYER list, players above max players, cloned names, zero durations, one name list on
 * five servers at once) next to two honest servers, crawled by the real crawl steps through an address-list
 * source. The batch write records each answer's reasons, the crawl's close the shared names; the API shows
 * them and leaves the suspects out of games(), maps(), population() and the default server list.
 * The faults are spec content only: a larger INFO count than the player list the server sends.
 */
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import { answerFakeReasons, DEFAULT_FAKE_PLAYER_RULES } from "../../src/crawler/fake-players";
import { finishCrawl, openCrawl } from "../../src/crawler/store/crawl-store";
import { writeServerOutcome } from "../../src/crawler/store/server-store";
import type { ServerStatus } from "../../src/protocol";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import type { SimPlayer, SimServerSpec } from "../../src/simulator/fleet-spec";
import { playersOf } from "../../src/simulator/content";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { startTestApi, type TestApi } from "../graphql/helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { loopbackOnly } from "../helpers/loopback-querier";
import { simSpec } from "../helpers/sim";

jest.setTimeout(120_000);

const players = (names: string[], durationSeconds = 300): SimPlayer[] =>
  names.map((name, i) => ({ name, score: i, durationSeconds }));
const distinct = (prefix: string, n: number, durationSeconds = 300): SimPlayer[] =>
  players(
    Array.from({ length: n }, (_, i) => `${prefix}${i}`),
    durationSeconds,
  );
const SHARED = ["xXFragLordXx", "NightHawk", "SilentBob", "PixelQueen", "TurboSnail", "LuckyLuke"];

interface Case {
  label: string;
  players: number;
  maxPlayers: number;
  list: SimPlayer[];
  reasons: string[];
}

const CASES: Case[] = [
  { label: "honest-a", players: 10, maxPlayers: 32, list: distinct("alpha", 10), reasons: [] },
  { label: "honest-b", players: 6, maxPlayers: 32, list: distinct("beta", 6), reasons: [] },
  {
    label: "inflated-info",
    players: 40,
    maxPlayers: 64,
    list: distinct("gamma", 3),
    reasons: ["INFO_ABOVE_PLAYER_LIST"],
  },
  {
    label: "above-max",
    players: 40,
    maxPlayers: 32,
    list: distinct("delta", 40),
    reasons: ["PLAYERS_ABOVE_MAX"],
  },
  {
    label: "same-names",
    players: 8,
    maxPlayers: 32,
    list: [...players(Array(6).fill("Player")), ...distinct("eps", 2)],
    reasons: ["SAME_NAME_PLAYERS"],
  },
  {
    label: "zero-durations",
    players: 8,
    maxPlayers: 32,
    list: distinct("zeta", 8, 0),
    reasons: ["ZERO_DURATION_PLAYERS"],
  },
  ...Array.from({ length: 5 }, (_, i): Case => ({
    label: `shared-${i}`,
    players: 6,
    maxPlayers: 32,
    list: players(SHARED),
    reasons: ["SHARED_PLAYER_NAMES"],
  })),
];
const HONEST = CASES.filter((c) => c.reasons.length === 0);

describe("inflated player counts", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  let api: TestApi;
  const asked: string[] = [];
  const idOf = new Map<string, number>();

  beforeAll(async () => {
    t = await createTestDatabase();
    const specs: SimServerSpec[] = CASES.map((c, i) => ({
      ...simSpec(
        {},
        {
          index: i,
          seed: 100 + i,
          state: {
            name: c.label,
            folder: "tf",
            appId: 440,
            map: "ctf_2fort",
            players: c.players,
            maxPlayers: c.maxPlayers,
            bots: 0,
          },
        },
      ),
      playerList: c.list,
    }));
    fleet = await startFleet(specs);
    const source = await t.db.masterSource.create({
      data: {
        name: "fleet",
        kind: "ADDRESS_LIST",
        host: "127.0.0.1",
        options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
      },
    });
    const config = loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8", QUERY_TIMEOUT_MS: "3000" });
    const totals = await runCrawlOnce({
      config,
      db: t.db,
      logger: silentLogger,
      sourceId: source.id,
      querier: loopbackOnly(asked),
    });
    expect(totals).toMatchObject({ finished: true, listed: CASES.length, answered: CASES.length });
    for (const [i, s] of fleet.specs.entries()) {
      const row = await t.db.gameServer.findUniqueOrThrow({
        where: { address_queryPort: { address: s.host, queryPort: s.queryPort } },
      });
      idOf.set(CASES[i]!.label, Number(row.id));
    }
    api = await startTestApi({ db: t.db });
  });
  afterAll(async () => {
    await api?.close();
    await fleet?.stop();
    await t?.drop();
  });

  it("records which rules fired per server, and the API shows them", async () => {
    const rows = await t.db.gameServer.findMany({
      select: { name: true, players: true, suspectedFake: true, fakeReasons: true },
    });
    const byName = new Map(rows.map((r) => [r.name, r]));
    for (const c of CASES) {
      expect({ label: c.label, ...byName.get(c.label) }).toEqual({
        label: c.label,
        name: c.label,
        players: c.players,
        suspectedFake: c.reasons.length > 0,
        fakeReasons: c.reasons,
      });
    }
    const res = await api.gql<{ server: { suspectedFake: boolean; fakeReasons: string[] } }>(
      "query($id: Int!) { server(id: $id) { suspectedFake fakeReasons } }",
      { id: idOf.get("inflated-info") },
    );
    expect(res.data?.server).toEqual({
      suspectedFake: true,
      fakeReasons: ["INFO_ABOVE_PLAYER_LIST"],
    });
  });

  it("leaves suspected servers out of the default server list, and lists them when asked", async () => {
    type Res = { servers: { nodes: Array<{ id: number; fakeReasons: string[] }> } };
    const byDefault = await api.gql<Res>("{ servers(first: 50) { nodes { id fakeReasons } } }");
    expect(byDefault.data?.servers.nodes.map((n) => n.id).sort((a, b) => a - b)).toEqual(
      HONEST.map((c) => idOf.get(c.label)).sort((a, b) => a! - b!),
    );
    const all = await api.gql<Res>(
      "{ servers(first: 50, filter: { excludeSuspectedFakes: false }) { nodes { id fakeReasons } } }",
    );
    expect(all.data?.servers.nodes).toHaveLength(CASES.length);
  });

  it("games() and maps() count honest servers only, unless asked", async () => {
    const honestPlayers = HONEST.reduce((n, c) => n + c.players, 0);
    const allPlayers = CASES.reduce((n, c) => n + c.players, 0);
    type Res = {
      games: Array<{ folder: string; players: number; servers: number }>;
      maps: Array<{ map: string; players: number; servers: number }>;
    };
    const counted = await api.gql<Res>(
      "{ games(first: 10) { folder players servers } maps(first: 10) { map players servers } }",
    );
    expect(counted.data).toEqual({
      games: [{ folder: "tf", players: honestPlayers, servers: HONEST.length }],
      maps: [{ map: "ctf_2fort", players: honestPlayers, servers: HONEST.length }],
    });
    const everything = await api.gql<Res>(
      "{ games(first: 10, excludeSuspectedFakes: false) { folder players servers } maps(first: 10, excludeSuspectedFakes: false) { map players servers } }",
    );
    expect(everything.data).toEqual({
      games: [{ folder: "tf", players: allPlayers, servers: CASES.length }],
      maps: [{ map: "ctf_2fort", players: allPlayers, servers: CASES.length }],
    });
  });

  it("population() leaves them out, unless asked", async () => {
    const pop = await api.gql<{
      population: {
        points: Array<{
          serversSeen: number;
          playersPeak: number;
          playersAvg: number;
          playersMin: number;
        }>;
      };
    }>(
      "query($from: DateTimeISO!) { population(from: $from, resolution: HOUR) { points { serversSeen playersPeak playersAvg playersMin } } }",
      { from: new Date(Date.now() - 2 * 3600_000).toISOString() },
    );
    const honestPlayers = HONEST.reduce((n, c) => n + c.players, 0);
    expect(pop.data?.population.points).toEqual([
      {
        serversSeen: HONEST.length,
        playersPeak: honestPlayers,
        playersAvg: honestPlayers,
        playersMin: honestPlayers,
      },
    ]);
    const all = await api.gql<{
      population: { points: Array<{ serversSeen: number; playersPeak: number }> };
    }>(
      "query($from: DateTimeISO!) { population(from: $from, resolution: HOUR, excludeSuspectedFakes: false) { points { serversSeen playersPeak } } }",
      { from: new Date(Date.now() - 2 * 3600_000).toISOString() },
    );
    expect(all.data?.population.points).toEqual([
      { serversSeen: CASES.length, playersPeak: CASES.reduce((n, c) => n + c.players, 0) },
    ]);
  });

  it("an honest answer clears the answer rules; the next close clears shared names no longer shared", async () => {
    const honest = (name: string): ServerStatus => ({
      ...statusOf(name),
      playerList: [{ name: `${name}-own`, score: 1, durationSeconds: 60 }],
    });
    await writeServerOutcome(
      t.db,
      {
        serverId: idOf.get("inflated-info")!,
        kind: "answered",
        status: honest("inflated-info"),
        pingMs: 1,
      },
      3,
    );
    const next = await openCrawl(t.db, {
      key: "after",
      sourceId: (await t.db.masterSource.findFirstOrThrow()).id,
      startedAt: new Date(),
      splits: [],
    });
    // Answered since the next crawl started: the only server of the shared list that the next close sees.
    await writeServerOutcome(
      t.db,
      { serverId: idOf.get("shared-0")!, kind: "answered", status: honest("shared-0"), pingMs: 1 },
      3,
    );
    expect(await reasonsOf("shared-0")).toEqual({
      suspectedFake: true,
      fakeReasons: ["SHARED_PLAYER_NAMES"],
    });
    await finishCrawl(t.db, next.id, { delistAfterMissedCrawls: 99, fakePortsPerIp: 0 });
    expect(await reasonsOf("inflated-info")).toEqual({ suspectedFake: false, fakeReasons: [] });
    expect(await reasonsOf("shared-0")).toEqual({ suspectedFake: false, fakeReasons: [] });
    expect(await reasonsOf("shared-1")).toEqual({
      suspectedFake: true,
      fakeReasons: ["SHARED_PLAYER_NAMES"],
    });
  });

  function statusOf(name: string): ServerStatus {
    return {
      protocol: "source",
      name,
      map: "ctf_2fort",
      folder: "tf",
      game: "Team Fortress",
      appId: 440,
      gameId: null,
      players: 1,
      maxPlayers: 32,
      bots: 0,
      passwordProtected: false,
      vacSecured: true,
      dedicated: true,
      os: "linux",
      version: "1",
      keywords: [],
      gamePort: null,
      steamId: null,
      playerList: [],
      rules: [],
      raw: null,
      pingMs: 1,
    };
  }

  async function reasonsOf(
    label: string,
  ): Promise<{ suspectedFake: boolean; fakeReasons: string[] }> {
    return t.db.gameServer.findUniqueOrThrow({
      where: { id: idOf.get(label)! },
      select: { suspectedFake: true, fakeReasons: true },
    });
  }
});

describe("no false alarms on a generated fleet", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t?.drop());

  it("flags none of 2,000 generated servers, whose small name pool repeats names across servers by chance", async () => {
    // Stored as the crawl would after each server's answer: online, answered now, its player names.
    const specs = makeFleet({ count: 2000, seed: 42, basePort: 0 });
    const sourceId = (
      await t.db.masterSource.create({
        data: { name: "generated", kind: "ADDRESS_LIST", host: "x" },
      })
    ).id;
    const answered = specs.map((s, i) => {
      const list = playersOf(s).map((p) => ({
        name: p.name,
        score: p.score,
        durationSeconds: p.durationSeconds,
      }));
      const status: ServerStatus = {
        ...statusLike(s.state.players, s.state.maxPlayers, s.state.bots),
        playerList: list,
      };
      return {
        i,
        reasons: answerFakeReasons(status, DEFAULT_FAKE_PLAYER_RULES),
        names: list.map((p) => p.name).filter((n) => n !== ""),
        bots: s.state.bots,
      };
    });
    expect(answered.filter((a) => a.reasons.length > 0)).toEqual([]);
    const rows = answered.map((a) => ({
      address: "192.0.2.1",
      queryPort: 1000 + a.i,
      sourceId,
      status: "ONLINE" as const,
      lastAnsweredAt: new Date(),
      bots: a.bots,
      playerNames: a.names.join("\n"),
    }));
    await t.db.gameServer.createMany({ data: rows });
    // A name repeats on several servers (the pool has 25,600 names), but never half a list.
    const [repeats] = await t.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT n FROM game_server, unnest(string_to_array(player_names, E'\n')) n GROUP BY n HAVING count(*) >= 3) x`;
    expect(repeats!.n).toBeGreaterThan(0);
    const crawl = await openCrawl(t.db, {
      key: "generated",
      sourceId,
      startedAt: new Date(Date.now() - 60_000),
      splits: [],
    });
    const closed = await finishCrawl(t.db, crawl.id, {
      delistAfterMissedCrawls: 99,
      fakePortsPerIp: 0,
    });
    expect(closed.sharedPlayerNames).toBe("checked");
    expect(await t.db.gameServer.count({ where: { suspectedFake: true } })).toBe(0);

    // Over its budget the rule is cancelled, and the crawl is closed all the same: a fleet whose names
    // cost minutes to compare (100,000 simulated servers) kept its crawl open while the close retried.
    const next = await openCrawl(t.db, {
      key: "over-budget",
      sourceId,
      startedAt: new Date(Date.now() - 60_000),
      splits: [],
    });
    const cut = await finishCrawl(t.db, next.id, {
      delistAfterMissedCrawls: 99,
      fakePortsPerIp: 0,
      sharedNamesBudgetMs: 1,
    });
    expect(cut).toMatchObject({ finished: true, sharedPlayerNames: "over budget" });
    expect(
      (await t.db.crawl.findUniqueOrThrow({ where: { id: next.id } })).finishedAt,
    ).not.toBeNull();
  });

  function statusLike(players: number, maxPlayers: number, bots: number): ServerStatus {
    return {
      protocol: "source",
      name: "generated",
      map: "m",
      folder: "f",
      game: "g",
      appId: 1,
      gameId: null,
      players,
      maxPlayers,
      bots,
      passwordProtected: false,
      vacSecured: true,
      dedicated: true,
      os: "linux",
      version: "1",
      keywords: [],
      gamePort: null,
      steamId: null,
      playerList: [],
      rules: [],
      raw: null,
      pingMs: 1,
    };
  }
});
