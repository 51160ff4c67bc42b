import { parseTarget, run } from "../../src/cli/commands/query";
import { playersOf, rulesOf } from "../../src/simulator/content";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { capture } from "../helpers/cli-capture";
import { simSpec } from "../helpers/sim";

describe("parseTarget", () => {
  it("reads HOST, HOST:PORT, [IPv6]:PORT, [IPv6] and bare IPv6", () => {
    expect(parseTarget("127.0.0.1")).toEqual({ host: "127.0.0.1", port: 27015 });
    expect(parseTarget("127.0.0.1:27016")).toEqual({ host: "127.0.0.1", port: 27016 });
    expect(parseTarget("[::1]:28000")).toEqual({ host: "::1", port: 28000 });
    expect(parseTarget("[::1]")).toEqual({ host: "::1", port: 27015 });
    expect(parseTarget("::1")).toEqual({ host: "::1", port: 27015 });
    expect(parseTarget("localhost:1")).toEqual({ host: "localhost", port: 1 });
  });
  it("refuses bad ports and brackets around non-IPv6", () => {
    for (const bad of [
      "127.0.0.1:0",
      "127.0.0.1:70000",
      "127.0.0.1:x",
      "[127.0.0.1]:5",
      ":27015",
    ]) {
      expect(() => parseTarget(bad)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
  });
});

describe("gsindex query against the simulator", () => {
  let fleet: RunningFleet;
  let hard: SimServerSpec;
  let silent: SimServerSpec;
  let noRules: SimServerSpec;
  beforeAll(async () => {
    fleet = await startFleet([
      // Split, bzip2-compressed, challenge-protected: the "Done when" server.
      simSpec(
        { challenge: "all", compress: true, maxPacketBytes: 600 },
        { index: 20, bigRules: true, state: { players: 60, maxPlayers: 64, bots: 4 } },
      ),
      simSpec({ silent: true }, { index: 21 }),
      simSpec({ answersRules: false, challenge: "players-rules" }, { index: 22, host: "::1" }),
    ]);
    [hard, silent, noRules] = fleet.specs as [SimServerSpec, SimServerSpec, SimServerSpec];
  });
  afterAll(() => fleet.stop());

  it("prints the JSON contract for a split, bzip2-compressed, challenge-protected server", async () => {
    const c = capture();
    const code = await run([`${hard.host}:${hard.queryPort}`, "--json", "--timeout", "1000"], c.io);
    expect(c.err()).toBe("");
    expect(code).toBe(0);
    const json = JSON.parse(c.out()) as Record<string, unknown>;
    expect(Object.keys(json).sort()).toEqual(["info", "pingMs", "players", "rules"]);
    expect(json.info).toMatchObject({
      protocol: 17,
      name: hard.state.name,
      map: hard.state.map,
      folder: hard.state.folder,
      game: hard.state.game,
      appId: hard.state.appId & 0xffff,
      players: 60,
      maxPlayers: 64,
      bots: 4,
      serverType: hard.state.serverType,
      environment: hard.state.environment,
      visibility: hard.state.passwordProtected ? 1 : 0,
      vac: hard.state.vacSecured ? 1 : 0,
      version: hard.state.version,
      port: hard.queryPort,
      steamId: expect.stringMatching(/^\d+$/),
      keywords: hard.state.keywords.join(","),
      gameId: String(hard.state.appId),
    });
    expect(json.players).toEqual(
      playersOf(hard).map((p, index) => ({
        index,
        name: p.name,
        score: p.score,
        duration: p.durationSeconds,
      })),
    );
    expect(json.rules).toEqual(rulesOf(hard));
    expect(typeof json.pingMs).toBe("number");
    const server = fleet.servers[0]!;
    // Challenge-protected: INFO was challenged, and PLAYER and RULES were sent with that challenge.
    expect(server.stats.challengesSent).toBeGreaterThanOrEqual(1);
    expect(server.stats.requests).toBeGreaterThanOrEqual(4);
  });

  it("prints a readable table by default", async () => {
    const c = capture();
    expect(await run([`${hard.host}:${hard.queryPort}`, "--timeout", "1000"], c.io)).toBe(0);
    expect(c.out()).toContain(`Name     ${hard.state.name}`);
    expect(c.out()).toContain(`Players (60)`);
    expect(c.out()).toContain(`Rules (${rulesOf(hard).length})`);
    expect(c.out()).toContain(playersOf(hard)[0]!.name);
  });

  it('explains a failed part in "errors" and keeps exit 0 when info answered (IPv6)', async () => {
    const c = capture();
    expect(
      await run([`[${noRules.host}]:${noRules.queryPort}`, "--json", "--timeout", "200"], c.io),
    ).toBe(0);
    const json = JSON.parse(c.out()) as {
      info: unknown;
      rules: unknown;
      errors: Record<string, { code: string; message: string }>;
    };
    expect(json.info).not.toBeNull();
    expect(json.rules).toBeNull();
    expect(json.errors).toEqual({ rules: { code: "TIMEOUT", message: expect.any(String) } });
  });

  it("exits 1 when info does not answer", async () => {
    const c = capture();
    expect(
      await run(
        [`${silent.host}:${silent.queryPort}`, "--json", "--timeout", "100", "--retries", "0"],
        c.io,
      ),
    ).toBe(1);
    const json = JSON.parse(c.out()) as {
      info: unknown;
      pingMs: unknown;
      errors: Record<string, { code: string }>;
    };
    expect(json.info).toBeNull();
    expect(json.pingMs).toBeNull();
    expect(json.errors.info?.code).toBe("TIMEOUT");
  });

  it("exits 2 on bad usage", async () => {
    const c = capture();
    expect(await run([], c.io)).toBe(2);
    expect(await run(["127.0.0.1", "--timeout", "soon"], c.io)).toBe(2);
    expect(await run(["127.0.0.1:99999"], c.io)).toBe(2);
  });
});
