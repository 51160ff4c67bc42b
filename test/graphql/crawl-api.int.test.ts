/**
 * The API over a database filled the real way: a simulated Valve master lists a simulated fleet on
 * loopback, `runCrawlOnce` (the crawler's own steps, no Redis) crawls it twice, and the API answers
 * from what was written: current state, ordering, filters, raw history, rollups, games and crawls.
 */
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { makeFleet } from "../../src/simulator/make-fleet";
import { startSimValveMaster, type SimValveMaster } from "../../src/simulator/master";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createCountingDb, startTestApi, type CountingDb, type TestApi } from "./helpers/api";

jest.setTimeout(120_000);

const COUNT = 150;
let tdb: TestDatabase;
let counting: CountingDb;
let fleet: RunningFleet;
let master: SimValveMaster;
let api: TestApi;
let sourceId: number;
let specs: readonly SimServerSpec[];

beforeAll(async () => {
  tdb = await createTestDatabase("gsindex_gql_crawl");
  counting = createCountingDb(tdb.url);
  fleet = await startFleet(
    makeFleet({
      count: COUNT,
      seed: 7,
      basePort: 0,
      mix: { silent: 0, malformed: 0, lossy: 0, slow: 0 },
    }),
  );
  specs = fleet.specs;
  master = await startSimValveMaster({ fleet: fleet.specs, rateLimit: false });
  sourceId = (
    await counting.db.masterSource.create({
      data: {
        name: "sim-master",
        kind: "VALVE_UDP",
        host: master.address.host,
        port: master.address.port,
        options: { requestsPerMinute: 0 },
      },
    })
  ).id;
  const config = loadConfig({
    DATABASE_URL: tdb.url,
    ADDRESS_ALLOW_LIST: "127.0.0.0/8",
    QUERY_TIMEOUT_MS: "1500",
    QUERY_BATCH_SIZE: "50",
    LOG_LEVEL: "silent",
  });
  for (let k = 0; k < 2; k++) {
    const totals = await runCrawlOnce({
      config,
      db: counting.db,
      logger: silentLogger,
      sourceId,
      now: () => Date.now() + k,
    });
    expect(totals).toMatchObject({ finished: true, listed: COUNT, answered: COUNT });
  }
  api = await startTestApi({ db: counting.db });
});

afterAll(async () => {
  await api?.close();
  await master?.close();
  await fleet?.stop();
  await counting?.db.$disconnect();
  await tdb?.drop();
});

const keyOf = (address: string, port: number): string => `${address}|${port}`;

type Node = {
  id: number;
  address: string;
  queryPort: number;
  name: string;
  map: string;
  players: number;
  appId: number;
  status: string;
};
const NODE = "id address queryPort name map players appId status";

async function all(
  filter: Record<string, unknown> | null,
  orderBy?: Record<string, unknown>,
): Promise<Node[]> {
  const out: Node[] = [];
  let after: string | null = null;
  for (;;) {
    const res: {
      data?: {
        servers: { nodes: Node[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
      } | null;
    } = await api.gql(
      `query($f: ServerFilterInput, $o: ServerOrderInput, $a: String) { servers(filter: $f, orderBy: $o, first: 100, after: $a) { nodes { ${NODE} } pageInfo { hasNextPage endCursor } } }`,
      { f: filter, o: orderBy, a: after },
    );
    const page = res.data?.servers;
    if (!page) throw new Error("no page");
    out.push(...page.nodes);
    if (!page.pageInfo.hasNextPage) return out;
    after = page.pageInfo.endCursor;
  }
}

describe("the API over a crawled fleet", () => {
  it("lists every crawled server with the state it reported, most players first", async () => {
    const nodes = await all(null);
    expect(nodes).toHaveLength(COUNT);
    const bySpec = new Map(specs.map((s) => [keyOf(s.host, s.queryPort), s]));
    for (const n of nodes) {
      const spec = bySpec.get(keyOf(n.address, n.queryPort)) as SimServerSpec;
      expect(n).toMatchObject({
        name: spec.state.name,
        map: spec.state.map,
        players: spec.state.players,
        appId: spec.state.appId,
        status: "ONLINE",
      });
    }
    for (let k = 1; k < nodes.length; k++) {
      const [a, b] = [nodes[k - 1] as Node, nodes[k] as Node];
      expect(a.players > b.players || (a.players === b.players && a.id > b.id)).toBe(true);
    }
  });

  it("pages forward and back through the same ordering", async () => {
    const q = `query($o: ServerOrderInput, $f: Int, $a: String, $l: Int, $b: String) {
      servers(orderBy: $o, first: $f, after: $a, last: $l, before: $b) { nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    type P = {
      servers: {
        nodes: { id: number }[];
        pageInfo: {
          hasNextPage: boolean;
          hasPreviousPage: boolean;
          startCursor: string;
          endCursor: string;
        };
      };
    };
    for (const o of [{ field: "NAME" }, { field: "MAP", direction: "DESC" }, { field: "PING" }]) {
      const forward: number[] = [];
      let a: string | null = null;
      for (;;) {
        const p: P = (await api.gql<P>(q, { o, f: 40, a })).data as P;
        forward.push(...p.servers.nodes.map((n) => n.id));
        if (!p.servers.pageInfo.hasNextPage) break;
        a = p.servers.pageInfo.endCursor;
      }
      const backward: number[] = [];
      let b: string | null = null;
      for (;;) {
        const p: P = (await api.gql<P>(q, { o, l: 40, b })).data as P;
        backward.unshift(...p.servers.nodes.map((n) => n.id));
        if (!p.servers.pageInfo.hasPreviousPage) break;
        b = p.servers.pageInfo.startCursor;
      }
      expect(forward).toHaveLength(COUNT);
      expect(backward).toEqual(forward);
    }
  });

  it("filters by map and by game as the fleet says", async () => {
    const map = specs[0]?.state.map as string;
    const byMap = await all({ map });
    expect(byMap.map((n) => keyOf(n.address, n.queryPort)).sort()).toEqual(
      specs
        .filter((s) => s.state.map.toLowerCase() === map.toLowerCase())
        .map((s) => keyOf(s.host, s.queryPort))
        .sort(),
    );
    const appId = specs[0]?.state.appId as number;
    expect((await all({ appId })).length).toBe(specs.filter((s) => s.state.appId === appId).length);
  });

  it("has a raw sample per crawl, and the rollups behind population and games", async () => {
    const spec = specs[3] as SimServerSpec;
    const res = await api.gql<{
      serverByAddress: {
        history: {
          resolution: string;
          points: Array<{ samples: number; playersAvg: number; map: string }>;
        };
      };
    }>(
      "query($a: String!, $p: Int!) { serverByAddress(address: $a, port: $p) { history(resolution: RAW) { resolution points { samples playersAvg map } } } }",
      { a: spec.host, p: spec.queryPort },
    );
    expect(res.errors).toBeUndefined();
    const points = res.data?.serverByAddress.history.points ?? [];
    expect(points).toHaveLength(2);
    for (const p of points)
      expect(p).toMatchObject({ samples: 1, playersAvg: spec.state.players, map: spec.state.map });

    const hourly = await api.gql<{
      serverByAddress: { history: { points: Array<{ samples: number; playersAvg: number }> } };
    }>(
      "query($a: String!, $p: Int!, $from: DateTimeISO!) { serverByAddress(address: $a, port: $p) { history(from: $from, resolution: HOUR) { points { samples playersAvg } } } }",
      { a: spec.host, p: spec.queryPort, from: new Date(Date.now() - 3 * 3600_000).toISOString() },
    );
    const hours = hourly.data?.serverByAddress.history.points ?? [];
    expect(hours.reduce((n, p) => n + p.samples, 0)).toBe(2);
    for (const p of hours) expect(p.playersAvg).toBe(spec.state.players);

    const pop = await api.gql<{
      population: { points: Array<{ serversSeen: number; playersPeak: number }> };
    }>(
      "query($from: DateTimeISO!) { population(from: $from, resolution: HOUR) { points { serversSeen playersPeak } } }",
      { from: new Date(Date.now() - 2 * 3600_000).toISOString() },
    );
    const total = specs.reduce((a, s) => a + s.state.players, 0);
    expect(
      pop.data?.population.points.some((p) => p.serversSeen === COUNT && p.playersPeak === total),
    ).toBe(true);

    const games = await api.gql<{
      games: Array<{ appId: number; players: number; servers: number }>;
    }>("{ games(first: 100) { appId players servers } }");
    for (const g of games.data?.games ?? []) {
      const of = specs.filter((s) => s.state.appId === g.appId);
      expect(g).toEqual({
        appId: g.appId,
        players: of.reduce((a, s) => a + s.state.players, 0),
        servers: of.length,
      });
    }
  });

  it("shows the crawls of the source", async () => {
    const res = await api.gql<{
      sources: Array<{
        name: string;
        crawls: Array<{ found: number; answered: number; partial: boolean; runs: unknown[] }>;
      }>;
    }>("{ sources { name crawls { found answered partial runs { region found } } } }");
    const source = res.data?.sources.find((s) => s.name === "sim-master");
    expect(source?.crawls).toHaveLength(2);
    for (const c of source?.crawls ?? [])
      expect(c).toMatchObject({ found: COUNT, answered: COUNT, partial: false });
  });
});
