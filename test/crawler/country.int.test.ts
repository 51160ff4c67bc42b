/**
 * game_server.country from the listing, offline: an address-list source names public addresses that the
 * blocked_range table keeps the policy from querying (nothing but loopback is ever sent to: the querier
 * fails the test otherwise), a loopback simulator server, a private address and a host name. The public
 * ones get their country from the dataset, the others null, and the API's `countries` filter finds them.
 * A management-server registration (sampled as reported, never queried) under a public address feeds the
 * COUNTRY population rollup.
 */
import net from "node:net";
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import { ManagementServer } from "../../src/management/management-server";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { startTestApi, type TestApi } from "../graphql/helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { loopbackOnly } from "../helpers/loopback-querier";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(60_000);

type Row = { address: string; country: string | null; notQueryable: boolean };

describe("country from the listed IP", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  let api: TestApi;
  const asked: string[] = [];

  beforeAll(async () => {
    t = await createTestDatabase();
    fleet = await startFleet(
      makeFleet({
        count: 1,
        seed: 9,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0 },
      }),
    );
    const sim = fleet.specs[0]!;
    // Public addresses (rows checked in test/crawler/country-lookup.test.ts), blocked so they are never queried.
    await t.db.blockedRange.createMany({
      data: [{ cidr: "1.1.1.0/24" }, { cidr: "2.58.196.0/23" }, { cidr: "2001:4860::/32" }],
    });
    const source = await t.db.masterSource.create({
      data: {
        name: "hand-made list",
        kind: "ADDRESS_LIST",
        host: "127.0.0.1",
        options: {
          addresses: [
            "1.1.1.1:27015",
            "2.58.197.15:27015",
            "[2001:4860::8888]:27015",
            `${sim.host}:${sim.queryPort}`,
            "10.1.2.3:27015",
            "bombergame.example.org:27015",
          ],
        },
      },
    });
    const config = loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8", QUERY_TIMEOUT_MS: "1000" });
    const totals = await runCrawlOnce({
      config,
      db: t.db,
      logger: silentLogger,
      sourceId: source.id,
      querier: loopbackOnly(asked),
    });
    expect(totals).toMatchObject({ finished: true, listed: 6, queried: 1, answered: 1 });
    api = await startTestApi({ db: t.db });
  });
  afterAll(async () => {
    await api?.close();
    await fleet?.stop();
    await t?.drop();
  });

  it("stores the country of public IP literals only, and sends nothing to them", async () => {
    expect(asked).toEqual([`${fleet.specs[0]!.host}:${fleet.specs[0]!.queryPort}`]);
    const rows: Row[] = await t.db.gameServer.findMany({
      select: { address: true, country: true, notQueryable: true },
      orderBy: { address: "asc" },
    });
    expect(rows).toEqual(
      [
        { address: "1.1.1.1", country: "AU", notQueryable: true },
        { address: "10.1.2.3", country: null, notQueryable: true },
        { address: "127.0.0.1", country: null, notQueryable: false },
        { address: "2.58.197.15", country: "BE", notQueryable: true },
        { address: "2001:4860::8888", country: "US", notQueryable: true },
        { address: "bombergame.example.org", country: null, notQueryable: true },
      ].sort((a, b) => (a.address < b.address ? -1 : 1)),
    );
  });

  it("the API filters by those countries", async () => {
    const query = `query($c: [String!]) { servers(filter: { countries: $c }, first: 10) { totalCount edges { node { address country } } } }`;
    type Page = {
      servers: {
        totalCount: number;
        edges: { node: { address: string; country: string | null } }[];
      };
    };
    const au = await api.gql<Page>(query, { c: ["au"] });
    expect(au.errors).toBeUndefined();
    expect(au.data?.servers.edges.map((e) => e.node)).toEqual([
      { address: "1.1.1.1", country: "AU" },
    ]);
    const several = await api.gql<Page>(query, { c: ["BE", "US", "FR"] });
    expect(several.data?.servers.edges.map((e) => e.node.address).sort()).toEqual([
      "2.58.197.15",
      "2001:4860::8888",
    ]);
  });

  it("a second listing keeps the country (the upsert recomputes it from the same IP)", async () => {
    const source = await t.db.masterSource.findFirstOrThrow();
    const config = loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8", QUERY_TIMEOUT_MS: "1000" });
    await runCrawlOnce({
      config,
      db: t.db,
      logger: silentLogger,
      sourceId: source.id,
      querier: loopbackOnly(asked),
    });
    expect(asked.every((a) => a.startsWith("127."))).toBe(true);
    expect(await t.db.gameServer.count({ where: { country: { not: null } } })).toBe(3);
  });

  describe("population by country", () => {
    let ms: ManagementServer;
    let client: net.Socket;
    afterAll(async () => {
      client?.destroy();
      await ms?.close();
    });

    it("a registration under a public address is rolled up under its country", async () => {
      // A relay on loopback registers a public address for a game server (issue 12.3: only trusted peers may).
      ms = await ManagementServer.start({
        host: "127.0.0.1",
        port: 0,
        trustedCidrs: ["127.0.0.1"],
      });
      client = net.connect(ms.address.port, "127.0.0.1");
      await new Promise((r) => client.once("connect", r));
      const send = (m: unknown) => client.write(JSON.stringify(m) + "\n");
      send({
        command: "msRegisterGameServer",
        content: { serverName: "Bomb arena", serverAddress: "1.1.1.2", serverPort: 4000 },
      });
      send({
        command: "msUpdateGameServerStats",
        content: { players: { current: 3, max: 4 }, isLobbyOpen: true, gameplayMode: 2 },
      });
      await waitFor("the registration with 3 players", () => ms.list()[0]?.players?.current === 3, {
        timeoutMs: 10_000,
        intervalMs: 20,
      });

      const source = await t.db.masterSource.create({
        data: { name: "bomber", kind: "MANAGEMENT", host: "127.0.0.1", port: ms.address.port },
      });
      const before = asked.length;
      await runCrawlOnce({
        config: loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" }),
        db: t.db,
        logger: silentLogger,
        sourceId: source.id,
        querier: loopbackOnly(asked),
      });
      expect(asked.length).toBe(before);
      expect(
        await t.db.gameServer.findFirstOrThrow({ where: { address: "1.1.1.2" } }),
      ).toMatchObject({ country: "AU", managementRegistered: true });

      type Pop = { population: { points: Array<{ serversSeen: number; playersPeak: number }> } };
      const query =
        "query($from: DateTimeISO!, $c: String) { population(from: $from, resolution: HOUR, filter: { country: $c }) { points { serversSeen playersPeak } } }";
      const from = new Date(Date.now() - 2 * 3600_000).toISOString();
      const au = await api.gql<Pop>(query, { from, c: "au" });
      expect(au.errors).toBeUndefined();
      expect(
        au.data?.population.points.some((p) => p.serversSeen === 1 && p.playersPeak === 3),
      ).toBe(true);
      const fr = await api.gql<Pop>(query, { from, c: "FR" });
      expect(fr.data?.population.points.every((p) => p.serversSeen === 0)).toBe(true);
    });
  });
});
