/**
 * The one A2S → ServerStatus mapping. The crawler and the protocol registry each had their own copy; they
 * differed on five points, each settled here with a test: a server without an INFO answer, the app id when
 * the game id's low bits are 0, `dedicated` for a SourceTV proxy, spaces around tags, and the SourceTV
 * fields of a server without SourceTV.
 */
import {
  type ServerQueryResult,
  type GoldSrcInfo,
  type SourceInfo,
  ProtocolError,
} from "../../../src/protocol";
import { serverQueryToStatus } from "../../../src/protocol/valve/server-status";

const sourceInfo = (extra: Partial<SourceInfo> = {}): SourceInfo => ({
  type: "source",
  protocol: 17,
  name: "Test server",
  map: "de_dust2",
  folder: "csgo",
  game: "Counter-Strike",
  appId: 730,
  players: 5,
  maxPlayers: 24,
  bots: 1,
  serverType: "d",
  environment: "l",
  visibility: 0,
  vac: 1,
  version: "1.38.7.9",
  ...extra,
});

const goldSrcInfo: GoldSrcInfo = {
  type: "goldsrc",
  address: "127.0.0.1:27015",
  name: "Old server",
  map: "crossfire",
  folder: "valve",
  game: "Half-Life",
  players: 2,
  maxPlayers: 16,
  protocol: 47,
  serverType: "D",
  environment: "W",
  visibility: 1,
  isMod: 0,
  vac: 0,
  bots: 0,
};

function result(
  info: SourceInfo | GoldSrcInfo | null,
  extra: Partial<ServerQueryResult> = {},
): ServerQueryResult {
  return {
    info: info === null ? null : { info, pingMs: 12 },
    players: null,
    rules: null,
    pingMs: info === null ? null : 12,
    errors: {},
    ...extra,
  };
}

describe("serverQueryToStatus", () => {
  it("maps a full Source answer", () => {
    const status = serverQueryToStatus(
      result(
        sourceInfo({
          edf: 0xf1,
          port: 27016,
          steamId: "90071996842377216",
          keywords: "secure,valve_ds",
          gameId: "730",
          tvPort: 27020,
          tvName: "GOTV",
        }),
        {
          players: { count: 1, players: [{ index: 0, name: "alice", score: 3, duration: 61.5 }] },
          rules: { count: 1, rules: [{ name: "mp_timelimit", value: "30" }] },
        },
      ),
    );
    expect(status).toEqual({
      protocol: "source",
      name: "Test server",
      map: "de_dust2",
      folder: "csgo",
      game: "Counter-Strike",
      appId: 730,
      gameId: "730",
      players: 5,
      maxPlayers: 24,
      bots: 1,
      passwordProtected: false,
      vacSecured: true,
      dedicated: true,
      os: "linux",
      version: "1.38.7.9",
      keywords: ["secure", "valve_ds"],
      gamePort: 27016,
      steamId: "90071996842377216",
      playerList: [{ name: "alice", score: 3, durationSeconds: 61.5 }],
      rules: [{ name: "mp_timelimit", value: "30" }],
      raw: null,
      pingMs: 12,
      serverType: "dedicated",
      tvPort: 27020,
      tvName: "GOTV",
    });
  });

  it("maps a GoldSrc answer (upper-case type and environment bytes; no Source-only fields)", () => {
    expect(serverQueryToStatus(result(goldSrcInfo))).toMatchObject({
      name: "Old server",
      appId: null,
      gameId: null,
      version: null,
      keywords: [],
      gamePort: null,
      steamId: null,
      dedicated: true,
      serverType: "dedicated",
      os: "windows",
      passwordProtected: true,
      vacSecured: false,
      tvPort: null,
      tvName: null,
    });
  });

  // Resolved difference 1: the registry's copy built an empty status (no name, 0 players) without INFO.
  it("is null without an INFO answer, whatever PLAYER and RULES said", () => {
    const noInfo = result(null, {
      players: { count: 0, players: [] },
      rules: { count: 0, rules: [] },
      errors: { info: new ProtocolError("TIMEOUT", "no reply") },
    });
    expect(serverQueryToStatus(noInfo)).toBeNull();
  });

  // Resolved difference 2: the registry's copy took the game id's low 24 bits even when they were 0.
  it.each([
    ["a game id carrying the app id, the 16-bit field 0", { appId: 0, gameId: "4000" }, 4000],
    [
      "a game id above 2^53 (a mod: app id in its low 24 bits)",
      { appId: 0, gameId: ((1n << 63n) | 1_234_567n).toString() },
      1_234_567,
    ],
    [
      "a game id whose low 24 bits are 0: the 16-bit field stands",
      { appId: 440, gameId: "16777216" },
      440,
    ],
    ["no game id", { appId: 240 }, 240],
  ])("app id from %s", (_, fields, expected) => {
    expect(serverQueryToStatus(result(sourceInfo(fields)))?.appId).toBe(expected);
  });

  // Resolved difference 3: the registry's copy said dedicated: false for a SourceTV proxy.
  it.each([
    ["d", true, "dedicated"],
    ["l", false, "listen"],
    ["p", null, "proxy"],
    ["\u0000", null, null],
  ] as const)("server type %p: dedicated %p, serverType %p", (byte, dedicated, serverType) => {
    expect(serverQueryToStatus(result(sourceInfo({ serverType: byte })))).toMatchObject({
      dedicated,
      serverType,
    });
  });

  // Resolved difference 4: the registry's copy kept spaces around tags (" hltv" never matched a filter).
  it("trims tags and drops empty ones", () => {
    expect(
      serverQueryToStatus(
        result(sourceInfo({ keywords: "secure, hltv,,  increased_maxplayers ," })),
      )?.keywords,
    ).toEqual(["secure", "hltv", "increased_maxplayers"]);
  });

  // Resolved difference 5: the registry's copy left tvPort / tvName out rather than null without SourceTV.
  it("has tvPort and tvName null, present, for a server without SourceTV", () => {
    const status = serverQueryToStatus(result(sourceInfo()));
    expect(status).toHaveProperty("tvPort", null);
    expect(status).toHaveProperty("tvName", null);
  });

  it("lists The Ship's deaths and money only where sent, and no other player field", () => {
    const status = serverQueryToStatus(
      result(sourceInfo({ appId: 2400 }), {
        players: {
          count: 2,
          players: [
            { index: 0, name: "ship", score: 1, duration: 2.5, deaths: 3, money: 400 },
            { index: 1, name: "\ufffd", nameHex: "ff", score: 0, duration: 1 },
          ],
        },
      }),
    );
    expect(status?.playerList).toEqual([
      { name: "ship", score: 1, durationSeconds: 2.5, deaths: 3, money: 400 },
      { name: "\ufffd", score: 0, durationSeconds: 1 },
    ]);
    expect(Object.keys(status!.playerList[1]!)).toEqual(["name", "score", "durationSeconds"]);
  });

  it("lists rules as name and value, leaving out the exact bytes a rule that is not UTF-8 carries", () => {
    const plain = [
      { name: "mp_timelimit", value: "30" },
      { name: "sv_tags", value: "" },
    ];
    expect(
      serverQueryToStatus(result(sourceInfo(), { rules: { count: 2, rules: plain } }))?.rules,
    ).toEqual(plain);
    const binary = serverQueryToStatus(
      result(sourceInfo(), {
        rules: {
          count: 2,
          rules: [
            { name: "mp_timelimit", value: "30" },
            { name: "dayz", value: "\ufffd\u0001", valueHex: "ff01" },
          ],
        },
      }),
    );
    expect(binary?.rules).toEqual([
      { name: "mp_timelimit", value: "30" },
      { name: "dayz", value: "\ufffd\u0001" },
    ]);
    expect(binary?.rules.every((r) => Object.keys(r).length === 2)).toBe(true);
  });
});
