/**
 * A crawl of a simulated fleet mixing every protocol, listed by an address list with each entry's
 * protocol: every server is queried in its own protocol, stored with its normalised state, its raw
 * key/values and a history sample.
 */
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import type { Querier } from "../../src/crawler/querier";
import { createDefaultQuerier } from "../../src/crawler/runtime";
import type { ProtocolId } from "../../src/protocol";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { CALM_MIX } from "../helpers/sim";
import { startTestApi } from "../graphql/helpers/api";

jest.setTimeout(60_000);

const PROTOCOLS: ProtocolId[] = [
  "source",
  "quake2",
  "quake3",
  "gamespy1",
  "gamespy2",
  "gamespy3",
  "doom3",
  "halflife",
  "ase",
];

describe("a crawl of a fleet mixing every protocol", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  beforeAll(async () => {
    t = await createTestDatabase();
    const specs = makeFleet({
      count: 36,
      seed: 11,
      basePort: 0,
      mix: { ...CALM_MIX, legacyProtocols: 0.8 },
    });
    // Every protocol at least once, whatever the draw gave.
    PROTOCOLS.forEach((protocol, i) => (specs[i] = { ...specs[i]!, protocol }));
    fleet = await startFleet(specs);
  });
  afterAll(async () => {
    await fleet?.stop();
    await t?.drop();
  });

  it("stores every server with its protocol, normalised state, raw key/values and a sample", async () => {
    const config = loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8", QUERY_TIMEOUT_MS: "1000" });
    const real = createDefaultQuerier(config);
    const querier: Querier = {
      query(target, signal) {
        if (!target.host.startsWith("127."))
          throw new Error(`the crawler tried to query ${target.host}`);
        return real.query(target, signal);
      },
    };
    const addresses = fleet.specs.map((s) => `${s.protocol ?? "source"} ${s.host}:${s.queryPort}`);
    const source = await t.db.masterSource.create({
      data: { name: "mixed", kind: "ADDRESS_LIST", host: "", options: { addresses } },
    });
    const totals = await runCrawlOnce({
      config,
      db: t.db,
      logger: silentLogger,
      sourceId: source.id,
      querier,
    });
    expect(totals).toMatchObject({
      finished: true,
      listed: fleet.specs.length,
      answered: fleet.specs.length,
      failed: 0,
    });

    const rows = await t.db.gameServer.findMany({ where: { sourceId: source.id } });
    expect(new Set(rows.map((r) => r.protocol))).toEqual(new Set(PROTOCOLS));
    for (const spec of fleet.specs) {
      const row = rows.find((r) => r.queryPort === spec.queryPort)!;
      expect(row).toMatchObject({
        protocol: spec.protocol ?? "source",
        status: "ONLINE",
        name: spec.state.name,
        map: spec.state.map,
        players: spec.state.players,
        maxPlayers: spec.state.maxPlayers,
      });
      if ((spec.protocol ?? "source") !== "source") expect(row.raw).not.toBeNull();
      // Where the count comes from (issue 15.4): an older protocol's status answer, or A2S_INFO.
      expect(row.playersSource).toBe(
        (spec.protocol ?? "source") === "source" ? "A2S_INFO" : "LEGACY_STATUS",
      );
      expect(await t.db.serverSample.count({ where: { gameServerId: row.id, online: true } })).toBe(
        1,
      );
    }

    // The API treats them like Source servers: filterable by protocol, with history.
    const api = await startTestApi({ db: t.db });
    try {
      for (const protocol of PROTOCOLS) {
        const res = await api.gql<{
          servers: { nodes: Array<{ protocol: string; name: string; queryPort: number }> };
        }>(
          "query($p: [String!]) { servers(filter: { protocols: $p }, first: 100) { nodes { protocol name queryPort } } }",
          { p: [protocol] },
        );
        const expected = fleet.specs.filter((s) => (s.protocol ?? "source") === protocol);
        expect(res.data?.servers.nodes.map((n) => n.queryPort).sort()).toEqual(
          expected.map((s) => s.queryPort).sort(),
        );
        const spec = expected[0]!;
        const history = await api.gql<{
          serverByAddress: {
            protocol: string;
            raw: Array<{ key: string; value: string }> | null;
            history: { points: Array<{ samples: number }> };
          };
        }>(
          "query($a: String!, $p: Int!) { serverByAddress(address: $a, port: $p) { protocol raw { key value } history(resolution: RAW) { points { samples } } } }",
          { a: spec.host, p: spec.queryPort },
        );
        expect(history.data?.serverByAddress.protocol).toBe(protocol);
        // The raw key/values are served beside the normalised fields (A2S has none).
        if (protocol === "source") expect(history.data?.serverByAddress.raw).toBeNull();
        else expect(history.data?.serverByAddress.raw?.length).toBeGreaterThan(0);
        expect(
          history.data?.serverByAddress.history.points.reduce((n, p) => n + p.samples, 0),
        ).toBe(1);
      }
    } finally {
      await api.close();
    }
  });
});
