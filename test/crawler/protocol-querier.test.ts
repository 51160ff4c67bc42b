import { createProtocolQuerier } from "../../src/crawler/queriers/protocol-querier";
import { protocolAdapter, UdpTransport, type ProtocolId } from "../../src/protocol";
import { startFleet } from "../../src/simulator/fleet";
import type { RunningFleet } from "../../src/simulator/fleet";
import { simSpec } from "../helpers/sim";

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

describe("the crawler querier for every protocol", () => {
  let fleet: RunningFleet;
  let transport: UdpTransport;
  beforeAll(async () => {
    transport = new UdpTransport({ bindAddress4: "127.0.0.1", bindAddress6: "::1" });
    fleet = await startFleet(
      PROTOCOLS.map((protocol, index) => ({ ...simSpec({}, { index: 40 + index }), protocol })),
    );
  });
  afterAll(async () => {
    await fleet.stop();
    await transport.close();
  });

  it("answers a simulated server of each protocol with its normalised status", async () => {
    const options = { timeoutMs: 800, retries: 1, transport };
    const querier = createProtocolQuerier(options);
    for (const [i, spec] of fleet.specs.entries()) {
      const protocol = PROTOCOLS[i]!;
      const outcome = await querier.query(
        { serverId: i, host: spec.host, queryPort: spec.queryPort, protocol },
        AbortSignal.timeout(2000),
      );
      expect(outcome).toMatchObject({
        kind: "answered",
        status: { protocol, name: spec.state.name, players: spec.state.players },
      });
    }
  });

  it("a Source server gets the same status from the crawler as from the protocol registry (one mapping)", async () => {
    const options = { timeoutMs: 800, retries: 1, transport };
    const spec = fleet.specs[0]!;
    const outcome = await createProtocolQuerier(options).query(
      { serverId: 0, host: spec.host, queryPort: spec.queryPort, protocol: "source" },
      AbortSignal.timeout(2000),
    );
    const fromRegistry = await protocolAdapter("source").queryStatus(
      { host: spec.host, port: spec.queryPort },
      options,
    );
    if (outcome.kind !== "answered") throw new Error(`not answered: ${JSON.stringify(outcome)}`);
    expect({ ...outcome.status, pingMs: null }).toEqual({ ...fromRegistry, pingMs: null });
    expect(outcome.status.name).toBe(spec.state.name);
    expect(Object.keys(fromRegistry)).toEqual(
      expect.arrayContaining(["tvPort", "tvName", "serverType"]),
    );
  });

  it("never queries a protocol that is not queried, and turns silence into a failed outcome", async () => {
    const options = { timeoutMs: 150, retries: 0, transport };
    const querier = createProtocolQuerier(options);
    const spec = fleet.specs[0]!;
    expect(
      await querier.query(
        { serverId: 1, host: spec.host, queryPort: spec.queryPort, protocol: "bomberman" },
        AbortSignal.timeout(1000),
      ),
    ).toMatchObject({ kind: "failed", code: "NOT_SUPPORTED" });
    // A Source server asked in Doom 3's language says nothing.
    expect(
      await querier.query(
        { serverId: 1, host: spec.host, queryPort: spec.queryPort, protocol: "doom3" },
        AbortSignal.timeout(1000),
      ),
    ).toMatchObject({ kind: "failed", code: "TIMEOUT" });
  });
});
