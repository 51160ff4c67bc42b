import { decodeDatagrams, encodePlayerRequest } from "../../src/protocol";
import { playersOf } from "../../src/simulator/content";
import { fleetLayout, fleetOptions } from "../../src/simulator/fleet-processes";
import type { SimPlayer } from "../../src/simulator/fleet-spec";
import {
  PlayerSessions,
  sessionLeftSeconds,
  sessionSeconds,
} from "../../src/simulator/player-sessions";
import { hash32 } from "../../src/simulator/random";
import { SimServer } from "../../src/simulator/sim-server";
import { simSpec } from "../helpers/sim";

const CLIENT = "127.0.0.1|50000";

/** `count` human players (and `bots` at the end), as playersOf lays them out. */
function slotsOf(seed: number, count: number, bots = 0): PlayerSessions {
  const players: SimPlayer[] = Array.from({ length: count + bots }, (_v, i) => ({
    name: i >= count ? `BOT ${i}` : `player${seed}-${i}`,
    score: i,
    durationSeconds: 100 + i,
  }));
  return new PlayerSessions(seed, players, bots);
}

describe("player sessions", () => {
  it("draws session lengths of the documented Weibull: median 9.6 minutes, mean 40", () => {
    const n = 200_000;
    const lengths = Array.from({ length: n }, (_v, i) => sessionSeconds((i + 0.5) / n));
    expect(sessionSeconds(0.5)).toBe(Math.round(1200 * Math.LN2 ** 2));
    const mean = lengths.reduce((a, b) => a + b, 0) / n;
    expect(mean).toBeGreaterThan(2400 * 0.97);
    expect(mean).toBeLessThan(2400 * 1.03);
    expect(lengths.reduce((a, b) => Math.min(a, b))).toBe(10);
  });

  it("starts each slot part way through a session, as a server that has been running would be", () => {
    // In a running server, a slot's player changes within 5 minutes with probability 1 - 1.5 e^-0.5 (about
    // 9 %): the rest of a length-biased session. A fresh session's draw would give 1 - e^-0.5 (39 %).
    const n = 50_000;
    let within = 0;
    for (let i = 0; i < n; i++) {
      const u = [0, 1, 2, 3].map((d) => hash32(99, i, d) / 0x1_0000_0000) as [
        number,
        number,
        number,
        number,
      ];
      if (sessionLeftSeconds(...u) <= 300) within += 1;
    }
    const expected = 1 - 1.5 * Math.exp(-0.5);
    expect(within / n).toBeGreaterThan(expected - 0.01);
    expect(within / n).toBeLessThan(expected + 0.01);
  });

  it("replaces players as a running server does, and never its bots", () => {
    // The share of slots whose player changes within t seconds: 1 - (1 + v) e^-v, v = sqrt(t / 1200).
    const changedWithin = (t: number): number => {
      const v = Math.sqrt(t / 1200);
      return 1 - (1 + v) * Math.exp(-v);
    };
    let joins = 0; // slots whose player changed within the hour
    let changedIn5Min = 0;
    const servers = 1000;
    const humans = 20;
    for (let seed = 1; seed <= servers; seed++) {
      const slots = slotsOf(seed, humans, 2);
      const start = slots.at(0);
      const fiveMin = slots.at(300);
      const hour = slots.at(3600);
      for (let i = 0; i < humans; i++) if (fiveMin[i]?.name !== start[i]?.name) changedIn5Min += 1;
      joins += hour.slice(0, humans).filter((p, i) => p.name !== start[i]?.name).length;
      expect(hour.slice(humans)).toEqual(
        start.slice(humans).map((b) => ({ ...b, durationSeconds: b.durationSeconds + 3600 })),
      );
    }
    expect(Math.abs(changedIn5Min / (servers * humans) - changedWithin(300))).toBeLessThan(0.01);
    expect(Math.abs(joins / (servers * humans) - changedWithin(3600))).toBeLessThan(0.02);
  });

  it("keeps a player's time running while they stay, and counts a newcomer's from their join", () => {
    const slots = slotsOf(7, 30);
    const before = slots.at(600);
    const after = slots.at(900);
    let stayed = 0;
    let newcomers = 0;
    after.forEach((p, i) => {
      const was = before[i] as SimPlayer;
      if (p.name === was.name && p.durationSeconds === was.durationSeconds + 300) stayed += 1;
      else {
        newcomers += 1;
        expect(p.durationSeconds).toBeLessThan(300);
        expect(p.durationSeconds).toBeGreaterThanOrEqual(0);
      }
    });
    expect(stayed).toBeGreaterThan(0);
    expect(stayed + newcomers).toBe(30);
    // The same seed and age give the same players, whatever was asked before.
    expect(slotsOf(7, 30).at(900)).toEqual(after);
  });

  it("answers A2S_PLAYER with players who came and went, on the fleet's clock and rate", () => {
    const spec = simSpec({ challenge: "none" }, { state: { players: 24, bots: 0 } });
    const namesOf = (server: SimServer): string[] => {
      const reply = decodeDatagrams(server.respond(encodePlayerRequest(), CLIENT)!.datagrams);
      if (reply.kind !== "players") throw new Error(`expected players, got ${reply.kind}`);
      return reply.value.players.map((p) => p.name);
    };
    let nowMs = 5_000_000;
    const options = { playerClockMs: () => nowMs, playerSessions: true, playerClockRate: 4 };
    const server = new SimServer(spec, options);
    const first = namesOf(server);
    expect(first).toEqual(playersOf(spec).map((p) => p.name));
    // An hour of the server's life is 15 minutes of the clock at rate 4.
    nowMs += 15 * 60_000;
    const later = namesOf(server);
    const expected = new PlayerSessions(spec.seed ?? 0, playersOf(spec), 0).at(3600);
    expect(later).toEqual(expected.map((p) => p.name));
    expect(later).not.toEqual(first);

    // Without sessions the clock moves durations only.
    const clockOnly = new SimServer(spec, { playerClockMs: () => nowMs });
    nowMs += 15 * 60_000;
    expect(namesOf(clockOnly)).toEqual(first);
  });

  it("passes sessions and the clock's rate from the fleet's layout to its servers", () => {
    const layout = fleetLayout({ count: 1, playerSessions: true, playerClockRate: 4 });
    expect(layout).toMatchObject({ playerClock: true, playerSessions: true, playerClockRate: 4 });
    expect(fleetOptions(layout)).toMatchObject({ playerSessions: true, playerClockRate: 4 });
    expect(fleetOptions(fleetLayout({ count: 1 })).playerSessions).toBeUndefined();
  });
});
