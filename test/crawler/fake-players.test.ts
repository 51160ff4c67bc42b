/** The single-answer fake-player rules (docs/fake-players.md), each at and just below its threshold. */
import {
  answerFakeReasons,
  DEFAULT_FAKE_PLAYER_RULES,
  type FakePlayerRules,
} from "../../src/crawler/fake-players";
import type { ServerStatus, StatusPlayer } from "../../src/protocol";

const RULES: FakePlayerRules = {
  infoExcess: 8,
  sameNamePlayers: 5,
  zeroDurationPlayers: 5,
  sharedNameServers: 3,
  sharedNamesPerServer: 5,
};

function status(o: {
  players: number;
  maxPlayers?: number;
  bots?: number | null;
  list?: StatusPlayer[];
}): ServerStatus {
  return {
    protocol: "source",
    name: "s",
    map: "m",
    folder: "tf",
    game: "TF",
    appId: 440,
    gameId: null,
    players: o.players,
    maxPlayers: o.maxPlayers ?? 100,
    bots: o.bots ?? 0,
    passwordProtected: false,
    vacSecured: true,
    dedicated: true,
    os: "linux",
    version: "1",
    keywords: [],
    gamePort: null,
    steamId: null,
    playerList: o.list ?? [],
    rules: [],
    raw: null,
    pingMs: 10,
  };
}

const named = (names: string[], durationSeconds = 120): StatusPlayer[] =>
  names.map((name) => ({ name, score: 0, durationSeconds }));
const distinct = (n: number, durationSeconds = 120): StatusPlayer[] =>
  named(
    Array.from({ length: n }, (_, i) => `p${i}`),
    durationSeconds,
  );

describe("answerFakeReasons", () => {
  it("the defaults are the documented ones", () => {
    expect(DEFAULT_FAKE_PLAYER_RULES).toEqual(RULES);
  });

  it("an honest answer fires nothing", () => {
    expect(answerFakeReasons(status({ players: 12, list: distinct(12) }), RULES)).toEqual([]);
    // A list lagging INFO by a few connecting players, or no list at all (A2S_PLAYER failed or hidden).
    expect(answerFakeReasons(status({ players: 20, list: distinct(12) }), RULES)).toEqual([]);
    expect(answerFakeReasons(status({ players: 40, list: [] }), RULES)).toEqual([]);
  });

  it("PLAYERS_ABOVE_MAX: more players than max players, unless max players is unknown (0)", () => {
    expect(
      answerFakeReasons(status({ players: 33, maxPlayers: 32, list: distinct(33) }), RULES),
    ).toEqual(["PLAYERS_ABOVE_MAX"]);
    expect(
      answerFakeReasons(status({ players: 32, maxPlayers: 32, list: distinct(32) }), RULES),
    ).toEqual([]);
    expect(
      answerFakeReasons(status({ players: 5, maxPlayers: 0, list: distinct(5) }), RULES),
    ).toEqual([]);
  });

  it("INFO_ABOVE_PLAYER_LIST: at least 8 more than the list and at least twice it", () => {
    expect(answerFakeReasons(status({ players: 11, list: distinct(3) }), RULES)).toEqual([
      "INFO_ABOVE_PLAYER_LIST",
    ]);
    expect(answerFakeReasons(status({ players: 10, list: distinct(3) }), RULES)).toEqual([]);
    // 9 above, but not twice the list.
    expect(answerFakeReasons(status({ players: 29, list: distinct(20) }), RULES)).toEqual([]);
    expect(
      answerFakeReasons(status({ players: 11, list: distinct(3) }), { ...RULES, infoExcess: 0 }),
    ).toEqual([]);
  });

  it("SAME_NAME_PLAYERS: 5 players beyond the bots with one name", () => {
    const clones = (n: number) => [...named(Array(n).fill("Player")), ...distinct(3)];
    expect(answerFakeReasons(status({ players: 8, list: clones(5) }), RULES)).toEqual([
      "SAME_NAME_PLAYERS",
    ]);
    expect(answerFakeReasons(status({ players: 7, list: clones(4) }), RULES)).toEqual([]);
    expect(answerFakeReasons(status({ players: 8, bots: 5, list: clones(5) }), RULES)).toEqual([]);
    // Empty names are players still connecting.
    expect(
      answerFakeReasons(
        status({ players: 8, list: [...named(Array(5).fill("")), ...distinct(3)] }),
        RULES,
      ),
    ).toEqual([]);
  });

  it("ZERO_DURATION_PLAYERS: 5 players and half the list connected for 0 s", () => {
    expect(
      answerFakeReasons(
        status({ players: 10, list: [...distinct(5, 0), ...named(["a", "b", "c", "d", "e"])] }),
        RULES,
      ),
    ).toEqual(["ZERO_DURATION_PLAYERS"]);
    expect(
      answerFakeReasons(
        status({
          players: 10,
          list: [...distinct(4, 0), ...named(["a", "b", "c", "d", "e", "f"])],
        }),
        RULES,
      ),
    ).toEqual([]);
    expect(
      answerFakeReasons(
        status({
          players: 16,
          list: [
            ...distinct(5, 0),
            ...named(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]),
          ],
        }),
        RULES,
      ),
    ).toEqual([]);
  });

  it("several rules fire together, in a stable order", () => {
    const list = named(Array(5).fill("Player"), 0);
    expect(answerFakeReasons(status({ players: 40, maxPlayers: 32, list }), RULES)).toEqual([
      "PLAYERS_ABOVE_MAX",
      "INFO_ABOVE_PLAYER_LIST",
      "SAME_NAME_PLAYERS",
      "ZERO_DURATION_PLAYERS",
    ]);
  });
});
