import {
  decodeDatagrams,
  decodeResponse,
  encodeGetChallengeRequest,
  encodeInfoRequest,
  encodePlayerRequest,
  encodeRulesRequest,
} from "../../src/protocol";
import { playersOf, rulesOf } from "../../src/simulator/content";
import { isLoopback, startFleet } from "../../src/simulator/fleet";
import { fleetLayout, fleetOptions } from "../../src/simulator/fleet-processes";
import { SimServer } from "../../src/simulator/sim-server";
import { simSpec } from "../helpers/sim";

const CLIENT = "127.0.0.1|50000";

describe("SimServer", () => {
  it("hands each client a stable challenge of its own", () => {
    const server = new SimServer(simSpec({ challenge: "all" }));
    expect(server.challengeFor(CLIENT)).toEqual(server.challengeFor(CLIENT));
    expect(server.challengeFor(CLIENT)).not.toEqual(server.challengeFor("127.0.0.1|50001"));
  });

  it("answers INFO with a challenge first, then with data for the right challenge only", () => {
    const server = new SimServer(simSpec({ challenge: "all" }));
    const first = server.respond(encodeInfoRequest(), CLIENT);
    expect(decodeResponse(first!.datagrams[0]!).kind).toBe("challenge");
    const wrong = server.respond(encodeInfoRequest(Buffer.from([1, 2, 3, 4])), CLIENT);
    expect(decodeResponse(wrong!.datagrams[0]!).kind).toBe("challenge");
    const right = server.respond(encodeInfoRequest(server.challengeFor(CLIENT)), CLIENT);
    expect(decodeResponse(right!.datagrams[0]!)).toMatchObject({
      kind: "info",
      value: { type: "source" },
    });
  });

  it("as a legacy server, ignores PLAYER -1 and answers `W`", () => {
    const server = new SimServer(simSpec({ challenge: "players-rules", legacyChallenge: true }));
    expect(server.respond(encodePlayerRequest(), CLIENT)).toBeNull();
    const challenge = server.respond(encodeGetChallengeRequest(), CLIENT);
    expect(decodeResponse(challenge!.datagrams[0]!).kind).toBe("challenge");
    const players = server.respond(encodePlayerRequest(server.challengeFor(CLIENT)), CLIENT);
    expect(decodeResponse(players!.datagrams[0]!).kind).toBe("players");
  });

  it("splits big rules in the GoldSrc layout and reports protocol 48", () => {
    const spec = simSpec({ splitFormat: "goldsrc" }, { bigRules: true });
    const server = new SimServer(spec);
    const rules = server.respond(encodeRulesRequest(), CLIENT)!.datagrams;
    expect(rules.length).toBeGreaterThan(1);
    expect(decodeDatagrams(rules)).toEqual({
      kind: "rules",
      value: { count: rulesOf(spec).length, rules: rulesOf(spec) },
    });
    const info = decodeResponse(server.respond(encodeInfoRequest(), CLIENT)!.datagrams[0]!);
    expect(info).toMatchObject({ kind: "info", value: { protocol: 48 } });
  });

  it("loses, duplicates and reorders the same way for the same seed", () => {
    const behaviour = { lossRate: 0.3, duplicateRate: 0.3, reorder: true };
    const run = (): number[][] => {
      const server = new SimServer(simSpec(behaviour, { bigRules: true }));
      return Array.from({ length: 20 }, () =>
        server.respond(encodeRulesRequest(), CLIENT)!.datagrams.map((d) => d[9] ?? -1),
      );
    };
    const a = run();
    expect(run()).toEqual(a);
    expect(new Set(a.map((d) => d.length)).size).toBeGreaterThan(1);
  });

  it("with a player clock, reports players' connection times running on; without one, the same reply", () => {
    const spec = simSpec({}, { state: { players: 5, bots: 0 } });
    const durationsOf = (server: SimServer): number[] => {
      const reply = decodeDatagrams(server.respond(encodePlayerRequest(), CLIENT)!.datagrams);
      if (reply.kind !== "players") throw new Error(`expected players, got ${reply.kind}`);
      return reply.value.players.map((p) => p.duration);
    };
    const specDurations = playersOf(spec).map((p) => p.durationSeconds);
    let nowMs = 1_000_000;
    const clocked = new SimServer(spec, { playerClockMs: () => nowMs });
    expect(durationsOf(clocked)).toEqual(specDurations);
    nowMs += 999;
    expect(durationsOf(clocked)).toEqual(specDurations);
    nowMs += 61_001;
    expect(durationsOf(clocked)).toEqual(specDurations.map((d) => d + 62));

    const fixed = new SimServer(spec);
    expect(durationsOf(fixed)).toEqual(specDurations);
    expect(durationsOf(fixed)).toEqual(specDurations);
  });

  it("encodes every reply it gives when told to prepare them, and none again when asked", () => {
    const spec = simSpec({ challenge: "none" }, { state: { players: 3, bots: 0 }, bigRules: true });
    const server = new SimServer(spec);
    server.prepareReplies();
    expect(server.stats.repliesEncoded).toBe(3);
    for (const request of [encodeInfoRequest(), encodePlayerRequest(), encodeRulesRequest()])
      expect(server.respond(request, CLIENT)).not.toBeNull();
    expect(server.stats.repliesEncoded).toBe(3);

    const lazy = new SimServer(spec);
    expect(lazy.stats.repliesEncoded ?? 0).toBe(0);
    lazy.respond(encodeRulesRequest(), CLIENT);
    expect(lazy.stats.repliesEncoded).toBe(1);
  });

  it("stays silent when told to, and on garbage", () => {
    expect(
      new SimServer(simSpec({ silent: true })).respond(encodeInfoRequest(), CLIENT),
    ).toBeNull();
    const server = new SimServer(simSpec({}));
    expect(server.respond(Buffer.from("hello"), CLIENT)).toBeNull();
    expect(server.stats.garbage).toBe(1);
  });
});

describe("fleetOptions", () => {
  it("prepares every process's replies, and gives it the wall clock as its player clock only when asked", () => {
    expect(fleetOptions(fleetLayout({ count: 1 }))).toEqual({ prepareReplies: true });
    const clock = fleetOptions(fleetLayout({ count: 1, playerClock: true })).playerClockMs;
    expect(Math.abs(clock!() - Date.now())).toBeLessThan(60_000);
  });
});

describe("startFleet", () => {
  it("refuses addresses that are not loopback", async () => {
    expect([
      isLoopback("127.0.0.9"),
      isLoopback("::1"),
      isLoopback("0:0::1"),
      isLoopback("0.0.0.0"),
      isLoopback("::"),
      isLoopback("10.0.0.1"),
    ]).toEqual([true, true, true, false, false, false]);
    await expect(startFleet([simSpec({}, { host: "0.0.0.0" })])).rejects.toThrow(/loopback only/);
  });
});
