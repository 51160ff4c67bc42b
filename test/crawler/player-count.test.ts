import { answeredPlayerCount } from "../../src/crawler/store/server-store";
import { makeStatus } from "../helpers/status";

const players = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `p${i}`, score: 0, durationSeconds: 1 }));

describe("where an answered player count comes from", () => {
  it("is A2S_INFO for a Source answer, even when the PLAYER list disagrees below 255", () => {
    expect(answeredPlayerCount(makeStatus({ players: 30, playerList: players(2) }))).toEqual({
      players: 30,
      source: "A2S_INFO",
    });
    expect(answeredPlayerCount(makeStatus({ players: 3, playerList: players(40) }))).toEqual({
      players: 3,
      source: "A2S_INFO",
    });
    expect(answeredPlayerCount(makeStatus({ players: 255, playerList: players(255) }))).toEqual({
      players: 255,
      source: "A2S_INFO",
    });
  });

  it("is the A2S_PLAYER list's length when it is longer than INFO's one byte can say", () => {
    expect(answeredPlayerCount(makeStatus({ players: 255, playerList: players(300) }))).toEqual({
      players: 300,
      source: "A2S_PLAYER",
    });
  });

  it("is an older protocol's status answer for every other protocol", () => {
    expect(
      answeredPlayerCount(
        makeStatus({ protocol: "quake3", players: 300, playerList: players(300) }),
      ),
    ).toEqual({ players: 300, source: "LEGACY_STATUS" });
  });
});
