/**
 * Crawls of the other list sources (no Redis: `runCrawlOnce`): the Steam Web API, whose records index
 * servers before any answer (relays and private addresses included, flagged, never queried), and a
 * management server, whose registrations are sampled as reported and never queried.
 */
import net from "node:net";
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import { ManagementServer } from "../../src/management/management-server";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { makeFleet } from "../../src/simulator/make-fleet";
import { startSimSteamWebApi, type SimSteamWebApi } from "../../src/simulator/steam-web-api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { loopbackOnly } from "../helpers/loopback-querier";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(60_000);

describe("list sources", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  beforeAll(async () => {
    t = await createTestDatabase();
    fleet = await startFleet(
      makeFleet({
        count: 30,
        seed: 5,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0 },
      }),
    );
  });
  afterAll(async () => {
    await fleet?.stop();
    await t?.drop();
  });

  describe("Steam Web API", () => {
    let api: SimSteamWebApi;
    afterAll(async () => api?.close());

    it("indexes every record, flags relays and private addresses, and queries only what the policy allows", async () => {
      const template = fleet.specs[0]!;
      const extra: SimServerSpec[] = [
        {
          ...template,
          host: "169.254.3.4",
          queryPort: 27015,
          state: { ...template.state, name: "relayed server" },
        },
        {
          ...template,
          host: "10.1.2.3",
          queryPort: 27015,
          state: { ...template.state, name: "private server" },
        },
      ];
      api = await startSimSteamWebApi({ fleet: [...fleet.specs, ...extra], key: "secret-key" });
      const source = await t.db.masterSource.create({
        data: {
          name: "steam",
          kind: "STEAM_WEB_API",
          host: "api.steampowered.com",
          options: { baseUrl: api.baseUrl, requestsPerMinute: 0 },
        },
      });
      const asked: string[] = [];
      const config = loadConfig({
        STEAM_WEB_API_KEY: "secret-key",
        ADDRESS_ALLOW_LIST: "127.0.0.0/8",
        QUERY_TIMEOUT_MS: "1000",
      });
      const reports: (number | null)[] = [];
      const totals = await runCrawlOnce({
        config,
        db: t.db,
        logger: silentLogger,
        sourceId: source.id,
        querier: loopbackOnly(asked),
        progressIntervalMs: 20,
        onProgress: (p) => reports.push(p.notQueryable),
      });
      // The half-second progress reports leave out the count that reads the source's rows; the totals have it.
      expect(reports.length).toBeGreaterThan(1);
      expect(reports.at(-1)).toBe(2);
      expect(reports.slice(0, -1).every((n) => n === null)).toBe(true);
      expect(totals).toMatchObject({
        finished: true,
        listed: 32,
        queried: 30,
        answered: 30,
        written: 30,
        notQueryable: 2,
      });
      expect(asked.every((a) => a.startsWith("127."))).toBe(true);

      const relay = await t.db.gameServer.findFirstOrThrow({ where: { address: "169.254.3.4" } });
      expect(relay).toMatchObject({
        isRelay: true,
        notQueryable: true,
        status: "UNKNOWN",
        name: "relayed server",
        lastQueriedAt: null,
      });
      const privateServer = await t.db.gameServer.findFirstOrThrow({
        where: { address: "10.1.2.3" },
      });
      expect(privateServer).toMatchObject({
        isRelay: false,
        notQueryable: true,
        name: "private server",
      });
      // Never answered: their counts are the Steam Web API's records (issue 15.4).
      expect([relay.playersSource, privateServer.playersSource]).toEqual([
        "STEAM_WEB_API",
        "STEAM_WEB_API",
      ]);
      expect(totals).toMatchObject({ refused: 2 });
      expect(
        await t.db.serverSample.count({
          where: { gameServerId: { in: [relay.id, privateServer.id] } },
        }),
      ).toBe(0);
      expect(
        await t.db.gameServer.count({ where: { sourceId: source.id, status: "ONLINE" } }),
      ).toBe(30);
    });
  });

  describe("management server", () => {
    let ms: ManagementServer;
    let client: net.Socket;
    afterAll(async () => {
      client?.destroy();
      await ms?.close();
    });

    it("samples registrations as reported and never queries them", async () => {
      ms = await ManagementServer.start({ host: "127.0.0.1", port: 0 });
      client = net.connect(ms.address.port, "127.0.0.1");
      await new Promise((r) => client.once("connect", r));
      const send = (m: unknown) => client.write(JSON.stringify(m) + "\n");
      send({
        command: "msRegisterGameServer",
        content: {
          serverName: "Bomb arena",
          serverAddress: "bombergame.example.org",
          serverPort: 4000,
        },
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
      const asked: string[] = [];
      // The management server on loopback may be contacted only because the allow-list says so (issue 12.5).
      const totals = await runCrawlOnce({
        config: loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" }),
        db: t.db,
        logger: silentLogger,
        sourceId: source.id,
        querier: loopbackOnly(asked),
      });
      expect(totals).toMatchObject({
        finished: true,
        listed: 1,
        queried: 0,
        answered: 1,
        written: 1,
      });
      expect(asked).toEqual([]);
      const s = await t.db.gameServer.findFirstOrThrow({
        where: { address: "bombergame.example.org", queryPort: 4000 },
      });
      expect(s).toMatchObject({
        managementRegistered: true,
        notQueryable: true,
        protocol: "bomberman",
        status: "ONLINE",
        name: "Bomb arena",
        players: 3,
        maxPlayers: 4,
      });
      expect(s.playersSource).toBe("MANAGEMENT");
      // A registration is answered without a query, and is not refused by the policy.
      expect(totals).toMatchObject({ refused: 0 });
      expect(await t.db.serverSample.count({ where: { gameServerId: s.id } })).toBe(1);
    });
  });
});
