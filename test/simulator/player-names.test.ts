import { hasNamelessPlayers, humanName, playersOf } from "../../src/simulator/content";
import { makeFleet } from "../../src/simulator/make-fleet";
import { PlayerSessions } from "../../src/simulator/player-sessions";
import { Random } from "../../src/simulator/random";

const DAYZ_APP_ID = 221100;
const RUST_APP_ID = 252490;

describe("simulated player names", () => {
  const fleet = makeFleet({ count: 3000, seed: 1 });
  const populated = fleet.filter((s) => s.state.players > s.state.bots + 2);

  it("leaves every name empty on Rust servers and on some DayZ servers, newcomers' too, as real ones send them", () => {
    const nameless = populated.filter((s) => hasNamelessPlayers(s));
    const ofGame = (appId: number) => populated.filter((s) => s.state.appId === appId);
    expect(ofGame(RUST_APP_ID).every((s) => hasNamelessPlayers(s))).toBe(true);
    const dayz = ofGame(DAYZ_APP_ID).filter((s) => hasNamelessPlayers(s)).length;
    expect(dayz).toBeGreaterThan(ofGame(DAYZ_APP_ID).length * 0.3);
    expect(dayz).toBeLessThan(ofGame(DAYZ_APP_ID).length * 0.7);
    expect(new Set(nameless.map((s) => s.state.appId))).toEqual(
      new Set([DAYZ_APP_ID, RUST_APP_ID]),
    );
    for (const spec of nameless.slice(0, 40)) {
      const players = playersOf(spec);
      expect(players.map((p) => p.name)).toEqual(players.map(() => ""));
      expect(players.some((p) => p.durationSeconds > 0)).toBe(true);
      // A day of the server's life: every slot has changed hands by then.
      const later = new PlayerSessions(spec.seed ?? 0, players, spec.state.bots).at(86_400);
      expect(later.map((p) => p.name)).toEqual(players.map(() => ""));
    }
  });

  it("names every player of the other servers", () => {
    const named = populated.filter((s) => !hasNamelessPlayers(s));
    expect(named.length).toBeGreaterThan(populated.length / 2);
    expect(named.some((s) => s.state.appId === DAYZ_APP_ID)).toBe(true);
    expect(named.every((s) => playersOf(s).every((p) => p.name !== ""))).toBe(true);
    for (const spec of named.slice(0, 80)) {
      const players = playersOf(spec);
      const later = new PlayerSessions(spec.seed ?? 0, players, spec.state.bots).at(86_400);
      expect(later.every((p) => p.name !== "")).toBe(true);
    }
  });

  it("makes most names a player's own, from many trigrams, with a few common ones shared", () => {
    const random = new Random(5);
    const names = Array.from({ length: 100_000 }, () => humanName(random));
    const distinct = new Set(names);
    expect(distinct.size).toBeGreaterThan(names.length * 0.85);
    const trigrams = new Set<string>();
    for (const name of distinct) {
      const padded = `  ${name.toLowerCase()} `;
      for (let i = 0; i + 3 <= padded.length; i++) trigrams.add(padded.slice(i, i + 3));
    }
    expect(trigrams.size).toBeGreaterThan(10_000);
    const player = names.filter((n) => n === "Player").length;
    expect(player).toBeGreaterThan(50);
    expect(player).toBeLessThan(1000);
  });
});
