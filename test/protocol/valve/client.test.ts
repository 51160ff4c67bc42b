import dgram from "node:dgram";
import {
  encodeInfoResponse,
  encodePlayersResponse,
  queryInfo,
  queryPing,
  queryPlayers,
  queryRules,
  queryServer,
  UdpTransport,
  isProtocolError,
  type A2SQueryOptions,
} from "../../../src/protocol";
import { playersOf, rulesOf } from "../../../src/simulator/content";
import { startFleet, type RunningFleet } from "../../../src/simulator/fleet";
import type { SimServerSpec } from "../../../src/simulator/fleet-spec";
import { sourceInfoOf } from "../../../src/simulator/sim-server";
import { simSpec } from "../../helpers/sim";

const FAST: A2SQueryOptions = { timeoutMs: 400, retries: 1 };

function expectSameAsSpec(
  result: Awaited<ReturnType<typeof queryServer>>,
  spec: SimServerSpec,
): void {
  expect(result.errors).toEqual({});
  const expectedInfo = sourceInfoOf(spec);
  expect(result.info?.info).toMatchObject({ ...expectedInfo, edf: expect.any(Number) });
  expect(result.players?.players.map((p) => [p.name, p.score, p.duration])).toEqual(
    playersOf(spec).map((p) => [p.name, p.score, p.durationSeconds]),
  );
  expect(result.rules?.rules).toEqual(rulesOf(spec));
  expect(result.pingMs).toEqual(expect.any(Number));
}

describe("A2S client against the simulator", () => {
  let transport: UdpTransport;
  let fleet: RunningFleet;
  const specs: Record<string, SimServerSpec> = {
    plain: simSpec({}),
    challengeAll: simSpec({ challenge: "all" }, { index: 1 }),
    challengeLists: simSpec({ challenge: "players-rules" }, { index: 2 }),
    legacy: simSpec({ challenge: "players-rules", legacyChallenge: true }, { index: 3 }),
    both: simSpec({ infoFormat: "both" }, { index: 4 }),
    goldSrcOnly: simSpec({ infoFormat: "goldsrc" }, { index: 5 }),
    splitCompressed: simSpec(
      { challenge: "all", compress: true, reorder: true, duplicateRate: 0.5 },
      { index: 6, bigRules: true },
    ),
    splitGoldSrc: simSpec(
      { splitFormat: "goldsrc", challenge: "players-rules" },
      { index: 7, bigRules: true },
    ),
    splitNoSizeField: simSpec({ sizeField: false }, { index: 8, bigRules: true }),
    theShip: simSpec(
      { challenge: "all" },
      { index: 9, state: { appId: 2400, folder: "ship", game: "The Ship", players: 12, bots: 0 } },
    ),
    silent: simSpec({ silent: true }, { index: 10 }),
    malformed: simSpec({ malformed: true }, { index: 11 }),
    noRules: simSpec({ answersRules: false }, { index: 12 }),
    ipv6: simSpec({ challenge: "all" }, { index: 13, host: "::1", bigRules: true }),
    slow: simSpec({ delayMs: 60, challenge: "all" }, { index: 14 }),
    // Single-datagram answers: a split answer needs every fragment of one attempt (ids differ per reply).
    lossy: simSpec({ lossRate: 0.3, challenge: "all" }, { index: 15 }),
  };
  const running: Record<string, SimServerSpec> = {};

  beforeAll(async () => {
    transport = new UdpTransport();
    const names = Object.keys(specs);
    fleet = await startFleet(names.map((n) => specs[n] as SimServerSpec));
    names.forEach((n, i) => (running[n] = fleet.specs[i] as SimServerSpec));
  });
  afterAll(async () => {
    await fleet.stop();
    await transport.close();
  });
  const at = (name: string) => ({ host: running[name]!.host, port: running[name]!.queryPort });
  const options = {
    ...FAST,
    get transport() {
      return transport;
    },
  };

  it("reads info, players and rules from a server that answers at once", async () => {
    expectSameAsSpec(await queryServer(at("plain"), options), running.plain!);
  });

  it("does the challenge dance for INFO, PLAYER and RULES (late-2020 servers)", async () => {
    const server = fleet.servers[Object.keys(specs).indexOf("challengeAll")]!;
    const before = { ...server.stats };
    expectSameAsSpec(await queryServer(at("challengeAll"), options), running.challengeAll!);
    // One challenge, then reused: INFO, INFO+challenge, PLAYER+challenge, RULES+challenge.
    expect(server.stats.challengesSent - before.challengesSent).toBe(1);
    expect(server.stats.requests - before.requests).toBe(4);
    // Asked one at a time, each query does its own dance.
    await queryPlayers(at("challengeAll"), options);
    await queryRules(at("challengeAll"), options);
    expect(server.stats.challengesSent - before.challengesSent).toBe(3);
  });

  it("answers a fresh challenge when the server refuses the one it handed out for INFO", async () => {
    // A server whose PLAYER and RULES want a challenge of their own: the reused one is answered with it.
    const server = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => server.bind(0, "127.0.0.1", () => resolve()));
    const infoChallenge = Buffer.from("11223344", "hex");
    const listChallenge = Buffer.from("55667788", "hex");
    const challengeReply = (c: Buffer): Buffer =>
      Buffer.concat([Buffer.from("ffffffff41", "hex"), c]);
    const seen: string[] = [];
    server.on("message", (msg, rinfo) => {
      const reply = (b: Buffer): void => void server.send(b, rinfo.port, rinfo.address);
      const type = msg[4];
      const tail = msg.subarray(msg.length - 4);
      seen.push(`${String.fromCharCode(type ?? 0)}:${tail.toString("hex")}`);
      if (type === 0x54) {
        if (!tail.equals(infoChallenge)) reply(challengeReply(infoChallenge));
        else reply(encodeInfoReply());
      } else if (type === 0x55) {
        if (!tail.equals(listChallenge)) reply(challengeReply(listChallenge));
        else
          reply(
            encodePlayersResponse(
              { count: 1, players: [{ index: 0, name: "solo", score: 3, duration: 10 }] },
              { appId: 10 },
            ),
          );
      }
    });
    const encodeInfoReply = (): Buffer => encodeInfoResponse(sourceInfoOf(running.plain!));
    try {
      const address = { host: "127.0.0.1", port: (server.address() as { port: number }).port };
      const result = await queryServer(address, { ...options, timeoutMs: 300, retries: 0 });
      expect(result.info?.info.name).toBe(running.plain!.state.name);
      expect(result.players?.players.map((p) => p.name)).toEqual(["solo"]);
      expect(seen.slice(0, 4)).toEqual(["T:65727900", "T:11223344", "U:11223344", "U:55667788"]);
    } finally {
      server.close();
    }
  });

  it("does the dance for PLAYER and RULES only", async () => {
    expectSameAsSpec(await queryServer(at("challengeLists"), options), running.challengeLists!);
  });

  it("falls back to `W` when PLAYER and RULES with -1 get no answer", async () => {
    expectSameAsSpec(await queryServer(at("legacy"), options), running.legacy!);
  });

  it("prefers the Source answer of a server that sends both `m` and `I`, keeping the GoldSrc one", async () => {
    const answer = await queryInfo(at("both"), options);
    expect(answer.info.type).toBe("source");
    expect(answer.goldSrc?.type).toBe("goldsrc");
    expect(answer.goldSrc?.address).toBe(`127.0.0.1:${running.both!.queryPort}`);
  });

  it("takes the GoldSrc answer when no Source one follows", async () => {
    const answer = await queryInfo(at("goldSrcOnly"), options);
    expect(answer.info).toMatchObject({
      type: "goldsrc",
      name: running.goldSrcOnly!.state.name,
      serverType: "D",
    });
  });

  it("reassembles split, bzip2-compressed, reordered and duplicated RULES behind a challenge", async () => {
    const rules = await queryRules(at("splitCompressed"), options);
    expect(rules.rules).toEqual(rulesOf(running.splitCompressed!));
    expect(rules.rules.length).toBeGreaterThan(100);
  });

  it("reassembles the GoldSrc split layout and a Source split without the size field", async () => {
    expect((await queryRules(at("splitGoldSrc"), options)).rules).toEqual(
      rulesOf(running.splitGoldSrc!),
    );
    expect((await queryRules(at("splitNoSizeField"), options)).rules).toEqual(
      rulesOf(running.splitNoSizeField!),
    );
  });

  it("reads The Ship's deaths and money, knowing the app id from INFO", async () => {
    const result = await queryServer(at("theShip"), options);
    expect(result.info?.info).toMatchObject({ appId: 2400, theShip: expect.any(Object) });
    expect(result.players?.players.map((p) => [p.name, p.deaths, p.money])).toEqual(
      playersOf(running.theShip!).map((p) => [p.name, p.deaths, p.money]),
    );
  });

  it("reports TIMEOUT for a silent server and does not ask it for players and rules", async () => {
    const result = await queryServer(at("silent"), options);
    expect(result.info).toBeNull();
    expect(result.errors.info?.code).toBe("TIMEOUT");
    expect(result.errors.players?.code).toBe("TIMEOUT");
    const server = fleet.servers[Object.keys(specs).indexOf("silent")]!;
    expect(server.stats.requests).toBe(2); // one INFO plus one re-send
  });

  it("turns a malformed answer into a typed error, not a timeout", async () => {
    const error = await queryInfo(at("malformed"), options).catch((e: unknown) => e);
    expect(isProtocolError(error)).toBe(true);
    expect(isProtocolError(error, "TIMEOUT")).toBe(false);
  });

  it("raises a server's timeout or malformed answer without a stack trace, and a caller's invalid option with one", async () => {
    const frames = (e: unknown): number =>
      String((e as Error).stack)
        .split("\n")
        .filter((l) => l.trimStart().startsWith("at ")).length;
    const limit = Error.stackTraceLimit;
    const silent = await queryInfo(at("silent"), options).catch((e: unknown) => e);
    const malformed = await queryInfo(at("malformed"), options).catch((e: unknown) => e);
    const invalid = await queryInfo(at("plain"), { timeoutMs: -1 }).catch((e: unknown) => e);
    expect(isProtocolError(silent, "TIMEOUT")).toBe(true);
    expect(String((silent as Error).stack)).toBe(`ProtocolError: ${(silent as Error).message}`);
    expect(isProtocolError(malformed)).toBe(true);
    expect(frames(malformed)).toBe(0);
    expect(isProtocolError(invalid, "INVALID_ARGUMENT")).toBe(true);
    expect(frames(invalid)).toBeGreaterThan(0);
    expect(Error.stackTraceLimit).toBe(limit);
  });

  it("keeps info and players when RULES is never answered", async () => {
    const result = await queryServer(at("noRules"), options);
    expect(result.info).not.toBeNull();
    expect(result.players).not.toBeNull();
    expect(result.rules).toBeNull();
    expect(result.errors.rules?.code).toBe("TIMEOUT");
  });

  it("speaks IPv6 (::1)", async () => {
    expectSameAsSpec(await queryServer(at("ipv6"), options), running.ipv6!);
  });

  it("waits for a slow server within the deadline", async () => {
    expectSameAsSpec(await queryServer(at("slow"), { ...options, timeoutMs: 1000 }), running.slow!);
  });

  it("gets through a lossy server by re-sending", async () => {
    expectSameAsSpec(
      await queryServer(at("lossy"), { ...options, timeoutMs: 2000, retries: 8 }),
      running.lossy!,
    );
    const server = fleet.servers[Object.keys(specs).indexOf("lossy")]!;
    expect(server.stats.datagramsDropped).toBeGreaterThan(0);
  });

  it("measures A2A_PING and PLAYER alone", async () => {
    await expect(queryPing(at("plain"), options)).resolves.toEqual(expect.any(Number));
    const players = await queryPlayers(at("challengeLists"), options);
    expect(players.players).toHaveLength(running.challengeLists!.state.players);
  });
});

describe("A2S client against hand-made servers", () => {
  async function rawServer(
    respond: (msg: Buffer, reply: (b: Buffer) => void) => void,
  ): Promise<{ port: number; close: () => Promise<void> }> {
    const socket = dgram.createSocket("udp4");
    socket.on("message", (msg, rinfo) =>
      respond(msg, (b) => socket.send(b, rinfo.port, rinfo.address)),
    );
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    return {
      port: socket.address().port,
      close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
    };
  }

  it("gives up with CHALLENGE_LOOP when every answer is a new challenge", async () => {
    let n = 0;
    const server = await rawServer((_msg, reply) =>
      reply(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x41, n++, 1, 2, 3])),
    );
    try {
      const error = await queryInfo({ host: "127.0.0.1", port: server.port }, FAST).catch(
        (e: unknown) => e,
      );
      expect(isProtocolError(error, "CHALLENGE_LOOP")).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("skips a late, broken reply to an earlier query instead of failing the current one", async () => {
    const players = encodePlayersResponse({
      count: 1,
      players: [{ index: 0, name: "late", score: 1, duration: 2 }],
    });
    const brokenInfo = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x49, 0x11, 0x41]);
    const server = await rawServer((msg, reply) => {
      if (msg[4] !== 0x55) return;
      reply(brokenInfo);
      reply(players);
    });
    try {
      const result = await queryPlayers({ host: "127.0.0.1", port: server.port }, FAST);
      expect(result.players.map((p) => p.name)).toEqual(["late"]);
    } finally {
      await server.close();
    }
  });

  it("fails with ABORTED when the caller aborts", async () => {
    const server = await rawServer(() => undefined);
    try {
      const controller = new AbortController();
      const pending = queryInfo(
        { host: "127.0.0.1", port: server.port },
        { timeoutMs: 5000, signal: controller.signal },
      );
      setTimeout(() => controller.abort(), 20);
      const error = await pending.catch((e: unknown) => e);
      expect(isProtocolError(error, "ABORTED")).toBe(true);
    } finally {
      await server.close();
    }
  });
});
