/**
 * GameDig (npm `gamedig`, v5, an independent implementation) queries the simulated servers of the
 * older protocols and must read what our registry query reads: the simulator's replies (built by our
 * response encoders) are the real protocol, not only our dialect of it. GameDig has no WON-era
 * Half-Life protocol (its goldsrc is A2S), so that one is not compared here.
 */
import { protocolAdapter, type QueryableProtocolId, UdpTransport } from "../../src/protocol";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { simSpec } from "../helpers/sim";

interface GameDigState {
  name: string;
  map: string;
  /** GameDig's Quake 2/3 parsers pass some values through as strings ("16", "0"). */
  password: boolean | string;
  maxplayers: number | string;
  numplayers: number;
  players: Array<{ name?: string }>;
}

const { GameDig } = require("gamedig") as {
  GameDig: { query(options: Record<string, unknown>): Promise<GameDigState> };
};

const PROTOCOLS: QueryableProtocolId[] = [
  "quake2",
  "quake3",
  "gamespy1",
  "gamespy2",
  "gamespy3",
  "doom3",
  "ase",
];

describe("GameDig against the legacy simulator", () => {
  let fleet: RunningFleet;
  let transport: UdpTransport;
  beforeAll(async () => {
    fleet = await startFleet(
      PROTOCOLS.map((protocol, i): SimServerSpec => ({
        ...simSpec({}, { index: 60 + i, state: { players: 6, bots: 0, maxPlayers: 16 } }),
        protocol,
      })),
    );
    transport = new UdpTransport({ bindAddress4: "127.0.0.1", bindAddress6: "::1" });
  });
  afterAll(async () => {
    await transport.close();
    await fleet.stop();
  });

  it.each(PROTOCOLS.map((p, i) => [p, i] as const))("%s", async (protocol, i) => {
    const spec = fleet.specs[i]!;
    const theirs = await GameDig.query({
      type: `protocol-${protocol}`,
      host: spec.host,
      port: spec.queryPort,
      givenPortOnly: true,
      maxRetries: 1,
      socketTimeout: 1000,
      attemptTimeout: 4000,
    });
    const ours = await protocolAdapter(protocol).queryStatus(
      { host: spec.host, port: spec.queryPort },
      { transport, timeoutMs: 2000 },
    );
    const password =
      typeof theirs.password === "string"
        ? theirs.password !== "0" && theirs.password !== ""
        : theirs.password;
    expect({
      name: theirs.name,
      map: theirs.map,
      players: theirs.numplayers,
      maxPlayers: Number(theirs.maxplayers),
      password,
    }).toEqual({
      name: ours.name,
      map: ours.map,
      players: ours.players,
      maxPlayers: ours.maxPlayers,
      password: ours.passwordProtected,
    });
    expect(theirs.players.map((p) => p.name)).toEqual(ours.playerList.map((p) => p.name));
    expect(ours.name).toBe(spec.state.name);
  });
});
