/**
 * A management registration cannot take over a server another source lists (issue 12): an A2S server
 * crawled from an address list, and registrations for the same address and port (one made after the
 * crawl, one before it) with another name and player count. After both sources are listed, the API
 * (real HTTP) shows the crawled values and counts each server's players once.
 */
import net from "node:net";
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import { ManagementServer } from "../../src/management/management-server";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { loopbackOnly } from "../helpers/loopback-querier";
import { startTestApi, type TestApi } from "./helpers/api";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(60_000);

describe("management registrations of crawled addresses", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  let ms: ManagementServer;
  let api: TestApi;
  const clients: net.Socket[] = [];
  beforeAll(async () => {
    t = await createTestDatabase();
    // Players the registrations' counts (Bomberman: at most 4) cannot match by chance.
    const specs = makeFleet({
      count: 2,
      seed: 12,
      basePort: 0,
      mix: { silent: 0, malformed: 0, lossy: 0, slow: 0 },
    });
    fleet = await startFleet(
      specs.map((s, i) => ({ ...s, state: { ...s.state, players: 10 + i, maxPlayers: 32 } })),
    );
    ms = await ManagementServer.start({ host: "127.0.0.1", port: 0 });
    api = await startTestApi({ db: t.db });
  });
  afterAll(async () => {
    for (const c of clients) c.destroy();
    await api?.close();
    await ms?.close();
    await fleet?.stop();
    await t?.drop();
  });

  /** A game server's own connection registering `host:port` with the given name and player count. */
  async function register(
    host: string,
    port: number,
    serverName: string,
    players: number,
  ): Promise<void> {
    const client = net.connect(ms.address.port, "127.0.0.1");
    clients.push(client);
    await new Promise((r) => client.once("connect", r));
    const send = (m: unknown) => client.write(JSON.stringify(m) + "\n");
    send({
      command: "msRegisterGameServer",
      content: { serverName, serverAddress: host, serverPort: port },
    });
    send({
      command: "msUpdateGameServerStats",
      content: { players: { current: players, max: 4 }, isLobbyOpen: true, gameplayMode: 2 },
    });
    const seen = () =>
      ms
        .list()
        .some((e) => e.address === host && e.port === port && e.players?.current === players);
    await waitFor(`the registration of ${host}:${port} with ${players} players`, seen, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(seen()).toBe(true);
  }

  it("shows the crawled server, whatever was registered for its address, and counts it once", async () => {
    const [a, b] = fleet.specs as [(typeof fleet.specs)[0], (typeof fleet.specs)[0]];
    const config = loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8", QUERY_TIMEOUT_MS: "1000" });
    const crawl = async (sourceId: number) =>
      runCrawlOnce({ config, db: t.db, logger: silentLogger, sourceId, querier: loopbackOnly([]) });
    const listed = await t.db.masterSource.create({
      data: {
        name: "a2s-list",
        kind: "ADDRESS_LIST",
        host: "127.0.0.1",
        options: { addresses: fleet.specs.map((s) => `${s.host}:${s.queryPort}`) },
      },
    });
    const management = await t.db.masterSource.create({
      data: { name: "bomber", kind: "MANAGEMENT", host: "127.0.0.1", port: ms.address.port },
    });

    // b is registered before any crawl lists it, a after.
    await register(b.host, b.queryPort, "HIJACKED b", 3);
    expect(await crawl(management.id)).toMatchObject({ finished: true, listed: 1 });
    expect(await crawl(listed.id)).toMatchObject({ finished: true, listed: 2, answered: 2 });
    await register(a.host, a.queryPort, "HIJACKED a", 4);
    expect(await crawl(management.id)).toMatchObject({ finished: true, listed: 2 });

    for (const s of [a, b]) {
      const res = await api.gql<{
        serverByAddress: {
          name: string;
          players: number;
          protocol: string;
          managementRegistered: boolean;
          source: { name: string };
        };
      }>(
        `query ($address: String!, $port: Int!) { serverByAddress(address: $address, port: $port) { name players protocol managementRegistered source { name } } }`,
        { address: s.host, port: s.queryPort },
      );
      expect(res.errors).toBeUndefined();
      expect(res.data?.serverByAddress).toEqual({
        name: s.state.name,
        players: s.state.players,
        protocol: "source",
        managementRegistered: false,
        source: { name: "a2s-list" },
      });
    }
    const res = await api.gql<{
      servers: { totalCount: number; nodes: { name: string }[] };
      games: { players: number; servers: number }[];
    }>(`{ servers(first: 10) { totalCount nodes { name } } games { players servers } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data?.servers.totalCount).toBe(2);
    expect(res.data?.servers.nodes.map((n) => n.name).sort()).toEqual(
      [a.state.name, b.state.name].sort(),
    );
    expect(res.data?.games.reduce((n, g) => n + g.servers, 0)).toBe(2);
    expect(res.data?.games.reduce((n, g) => n + g.players, 0)).toBe(
      a.state.players + b.state.players,
    );
  });
});
