/**
 * GameDig (npm `gamedig`, v5) queries the simulator and must report what our client reports: the
 * simulator speaks the real protocol, not only our dialect of it. GameDig ships a CommonJS build
 * (dist/index.cjs, its "require" export), so jest loads it directly.
 */
import { queryServer, UdpTransport, type ServerQueryResult } from "../../src/protocol";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { simSpec } from "../helpers/sim";

interface GameDigState {
  name: string;
  map: string;
  password: boolean;
  version: string;
  maxplayers: number;
  numplayers: number;
  raw: {
    protocol: number;
    folder: string;
    game: string;
    appId: number;
    numbots: number;
    listentype: string;
    environment: string;
    secure: number;
    steamid?: string;
    tags?: string[];
    players: Array<{ name: string; score: number; time: number }>;
    rules?: Record<string, string>;
  };
}

const { GameDig } = require("gamedig") as {
  GameDig: { query(options: Record<string, unknown>): Promise<GameDigState> };
};

describe("GameDig against the simulator", () => {
  let fleet: RunningFleet;
  let transport: UdpTransport;
  const cases: Array<[string, SimServerSpec]> = [
    ["no challenge", simSpec({}, { index: 30, state: { players: 20, maxPlayers: 24, bots: 2 } })],
    [
      "challenge on INFO, PLAYER and RULES",
      simSpec({ challenge: "all" }, { index: 31, state: { players: 12, bots: 0 } }),
    ],
    [
      "challenge on PLAYER and RULES only",
      simSpec({ challenge: "players-rules" }, { index: 32, state: { players: 5, bots: 1 } }),
    ],
    [
      "split, bzip2-compressed, behind a challenge",
      simSpec(
        { challenge: "all", compress: true },
        { index: 33, bigRules: true, state: { players: 64, maxPlayers: 64, bots: 0 } },
      ),
    ],
    [
      "split, reordered and duplicated",
      simSpec(
        { reorder: true, duplicateRate: 0.5 },
        { index: 34, bigRules: true, state: { players: 30, bots: 0 } },
      ),
    ],
    [
      "GoldSrc `m` then Source `I`",
      simSpec(
        { infoFormat: "both", challenge: "players-rules" },
        { index: 36, state: { players: 8, bots: 1 } },
      ),
    ],
    [
      "The Ship (deaths and money after the players)",
      simSpec(
        { challenge: "all" },
        {
          index: 37,
          state: {
            appId: 2400,
            folder: "ship",
            game: "The Ship",
            players: 10,
            maxPlayers: 16,
            bots: 0,
          },
        },
      ),
    ],
    [
      "GoldSrc split layout (protocol 48)",
      simSpec(
        { splitFormat: "goldsrc", challenge: "players-rules" },
        {
          index: 35,
          bigRules: true,
          state: { appId: 10, folder: "cstrike", game: "Counter-Strike", players: 16, bots: 0 },
        },
      ),
    ],
  ];

  beforeAll(async () => {
    fleet = await startFleet(cases.map(([, spec]) => spec));
    transport = new UdpTransport();
  });
  afterAll(async () => {
    await transport.close();
    await fleet.stop();
  });

  it.each(cases.map(([name], i) => [name, i] as const))("%s", async (_name, i) => {
    const spec = fleet.specs[i] as SimServerSpec;
    const theirs = await GameDig.query({
      type: "protocol-valve",
      host: spec.host,
      port: spec.queryPort,
      givenPortOnly: true,
      requestRules: true,
      maxRetries: 1,
      socketTimeout: 1000,
      attemptTimeout: 4000,
    });
    const ours: ServerQueryResult = await queryServer(
      { host: spec.host, port: spec.queryPort },
      { transport, timeoutMs: 2000 },
    );
    expect(ours.errors).toEqual({});
    const info = ours.info?.info;
    if (info?.type !== "source") throw new Error("expected a Source INFO answer");

    expect({
      name: theirs.name,
      map: theirs.map,
      folder: theirs.raw.folder,
      game: theirs.raw.game,
      protocol: theirs.raw.protocol,
      players: theirs.numplayers,
      maxPlayers: theirs.maxplayers,
      bots: theirs.raw.numbots,
      serverType: theirs.raw.listentype,
      environment: theirs.raw.environment,
      visibility: theirs.password ? 1 : 0,
      vac: theirs.raw.secure,
      version: theirs.version,
      steamId: theirs.raw.steamid,
      keywords: theirs.raw.tags?.join(","),
    }).toEqual({
      name: info.name,
      map: info.map,
      folder: info.folder,
      game: info.game,
      protocol: info.protocol,
      players: info.players,
      maxPlayers: info.maxPlayers,
      bots: info.bots,
      serverType: info.serverType,
      environment: info.environment,
      visibility: info.visibility,
      vac: info.vac,
      version: info.version,
      steamId: info.steamId,
      keywords: info.keywords,
    });
    // GameDig replaces the 16-bit app id by the game id's low 24 bits, as we do for layouts.
    expect(theirs.raw.appId).toBe(Number(BigInt(info.gameId ?? info.appId) & 0xffffffn));

    expect(theirs.raw.players).toEqual(
      ours.players?.players.map((p) => ({ name: p.name, score: p.score, time: p.duration })),
    );
    expect(theirs.raw.players.length).toBe(spec.state.players);
    expect(theirs.raw.rules).toEqual(
      Object.fromEntries((ours.rules?.rules ?? []).map((r) => [r.name, r.value])),
    );
    expect(Object.keys(theirs.raw.rules ?? {}).length).toBe(ours.rules?.rules.length);
  });
});
