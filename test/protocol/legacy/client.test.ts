/**
 * Legacy queries through the registry against simulated servers on loopback (each answering through
 * the library's own response encoders), plus hand-written loopback servers for the awkward cases:
 * silence, stray datagrams, a GameSpy v1 reply that never sends \final\.
 */
import dgram from "node:dgram";
import {
  UdpTransport,
  queryGamespy1,
  PROTOCOL_REGISTRY,
  protocolAdapter,
  type QueryableProtocolId,
  type ProtocolId,
} from "../../../src/protocol";
import { encodeGamespy1Response } from "../../../src/protocol/legacy/gamespy1";
import {
  encodeGamespy3ChallengeResponse,
  encodeGamespy3Response,
} from "../../../src/protocol/legacy/gamespy3";
import { playersOf } from "../../../src/simulator/content";
import { asciiOnly } from "../../../src/simulator/legacy-server";
import { startFleet } from "../../../src/simulator/fleet";
import type { RunningFleet } from "../../../src/simulator/fleet";
import type { SimServerSpec } from "../../../src/simulator/fleet-spec";
import { simSpec } from "../../helpers/sim";

const FAST = { timeoutMs: 600, retries: 1 };
const PROTOCOLS: QueryableProtocolId[] = [
  "source",
  "quake2",
  "quake3",
  "gamespy1",
  "gamespy2",
  "gamespy3",
  "doom3",
  "halflife",
  "ase",
];

describe("legacy queries over loopback", () => {
  let transport: UdpTransport;
  let fleet: RunningFleet;
  const running = new Map<ProtocolId, SimServerSpec>();

  beforeAll(async () => {
    transport = new UdpTransport({ bindAddress4: "127.0.0.1", bindAddress6: "::1" });
    const specs = PROTOCOLS.map((protocol, index): SimServerSpec => ({
      ...simSpec(
        {},
        {
          index,
          bigRules: protocol === "halflife",
          state: { players: 20, bots: 2, maxPlayers: 32 },
        },
      ),
      protocol,
    }));
    fleet = await startFleet(specs);
    fleet.specs.forEach((spec, i) => running.set(PROTOCOLS[i]!, spec));
  });
  afterAll(async () => {
    await fleet.stop();
    await transport.close();
  });

  it.each(PROTOCOLS)(
    "%s: the registry query returns the simulated state as a ServerStatus",
    async (protocol) => {
      const spec = running.get(protocol)!;
      const status = await protocolAdapter(protocol).queryStatus(
        { host: spec.host, port: spec.queryPort },
        { ...FAST, transport },
      );
      expect(status.protocol).toBe(protocol);
      expect(status.name).toBe(spec.state.name);
      expect(status.map).toBe(spec.state.map);
      expect(status.maxPlayers).toBe(spec.state.maxPlayers);
      expect(status.players).toBe(spec.state.players);
      expect(status.playerList.map((p) => p.name)).toEqual(
        // The A2S simulator sends names as they are; the legacy one, ASCII only.
        playersOf(spec).map((p) => (protocol === "source" ? p.name : asciiOnly(p.name))),
      );
      expect(status.passwordProtected).toBe(spec.state.passwordProtected);
      expect(status.pingMs).toEqual(expect.any(Number));
      expect(status.partial).toBeUndefined();
      if (protocol !== "source") expect(status.raw).not.toBeNull();
    },
  );

  it("GameSpy v1 and v3 replies span several datagrams in the simulator", () => {
    const gs1 = fleet.servers[PROTOCOLS.indexOf("gamespy1")]!.stats;
    const gs3 = fleet.servers[PROTOCOLS.indexOf("gamespy3")]!.stats;
    expect(gs1.repliesSent).toBeGreaterThan(1);
    expect(gs3.challengesSent).toBeGreaterThan(0);
  });

  it("applies each protocol's query-port offset", () => {
    expect(PROTOCOL_REGISTRY.ase.defaultQueryPort(22003)).toBe(22126);
    expect(PROTOCOL_REGISTRY.gamespy1.defaultQueryPort(7777)).toBe(7778);
    expect(PROTOCOL_REGISTRY.quake3.defaultQueryPort(27960)).toBe(27960);
    expect(PROTOCOL_REGISTRY.source.defaultQueryPort(27015)).toBe(27015);
    expect(() => protocolAdapter("bomberman")).toThrow(
      expect.objectContaining({ code: "NOT_SUPPORTED" }),
    );
  });

  describe("hand-written servers", () => {
    let socket: dgram.Socket;
    let port = 0;
    let onRequest: (request: Buffer, reply: (datagram: Buffer) => void) => void = () => undefined;

    beforeAll(async () => {
      socket = dgram.createSocket("udp4");
      socket.on("message", (request, rinfo) =>
        onRequest(request, (d) => socket.send(d, rinfo.port, rinfo.address)),
      );
      await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
      port = socket.address().port;
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    });

    it.each(PROTOCOLS.filter((p) => p !== "source"))(
      "%s: a silent server is TIMEOUT",
      async (protocol) => {
        onRequest = () => undefined;
        await expect(
          protocolAdapter(protocol).queryStatus(
            { host: "127.0.0.1", port },
            { timeoutMs: 150, retries: 0, transport },
          ),
        ).rejects.toMatchObject({ code: "TIMEOUT" });
      },
    );

    it("GameSpy v1 without \\final\\ returns what arrived, marked partial", async () => {
      onRequest = (_req, reply) => {
        const datagrams = encodeGamespy1Response(
          [
            { key: "hostname", value: "Half" },
            { key: "numplayers", value: "1" },
            { key: "player_0", value: "Bob" },
          ],
          { queryId: 7, maxDatagramBytes: 60 },
        );
        for (const d of datagrams.slice(0, -1)) reply(d); // the last datagram (with \final\) is lost
      };
      const result = await queryGamespy1(
        { host: "127.0.0.1", port },
        { timeoutMs: 200, retries: 0, transport },
      );
      expect(result.partial).toBe(true);
      expect(result.reply.pairs).toContainEqual({ key: "hostname", value: "Half" });
      const status = await protocolAdapter("gamespy1").queryStatus(
        { host: "127.0.0.1", port },
        { timeoutMs: 200, retries: 0, transport },
      );
      expect(status).toMatchObject({ name: "Half", partial: true });
    });

    it("GameSpy v1 datagrams out of order complete the reply", async () => {
      onRequest = (_req, reply) => {
        const pairs = Array.from({ length: 12 }, (_, i) => ({
          key: `player_${i}`,
          value: `p${i}`,
        }));
        const datagrams = encodeGamespy1Response([{ key: "hostname", value: "Box" }, ...pairs], {
          queryId: 9,
          maxDatagramBytes: 80,
        });
        for (const d of [...datagrams].reverse()) reply(d);
      };
      const status = await protocolAdapter("gamespy1").queryStatus(
        { host: "127.0.0.1", port },
        { ...FAST, transport },
      );
      expect(status.playerList).toHaveLength(12);
      expect(status.partial).toBeUndefined();
    });

    const gs3Reply = (requestId: Buffer) =>
      encodeGamespy3Response(
        {
          requestId,
          server: [
            { key: "hostname", value: "Split" },
            { key: "numplayers", value: "30" },
          ],
          players: {
            fields: ["player_"],
            rows: Array.from({ length: 30 }, (_, i) => ({ player_: `player number ${i}` })),
          },
          teams: { fields: [], rows: [] },
        },
        { maxDatagramBytes: 200 },
      );

    it("GameSpy v3 starts again from the challenge when a query goes unanswered", async () => {
      const challenges: number[] = [];
      let queries = 0;
      onRequest = (req, reply) => {
        const requestId = req.subarray(3, 7);
        if (req[2] === 0x09) {
          const challenge = 1000 + challenges.length;
          challenges.push(challenge);
          reply(encodeGamespy3ChallengeResponse(requestId, challenge));
          return;
        }
        queries += 1;
        if (queries === 1) return; // the first full query is lost
        expect(req.readInt32BE(7)).toBe(challenges[challenges.length - 1]);
        for (const d of gs3Reply(requestId)) reply(d);
      };
      const status = await protocolAdapter("gamespy3").queryStatus(
        { host: "127.0.0.1", port },
        { timeoutMs: 800, retries: 1, transport },
      );
      expect(challenges).toHaveLength(2);
      expect(status).toMatchObject({ name: "Split", players: 30 });
      expect(status.playerList).toHaveLength(30);
      expect(status.partial).toBeUndefined();
    });

    it("GameSpy v3 with a datagram lost returns what arrived, marked partial", async () => {
      onRequest = (req, reply) => {
        const requestId = req.subarray(3, 7);
        if (req[2] === 0x09) reply(encodeGamespy3ChallengeResponse(requestId, null));
        else for (const d of gs3Reply(requestId).slice(0, -1)) reply(d);
      };
      const status = await protocolAdapter("gamespy3").queryStatus(
        { host: "127.0.0.1", port },
        { timeoutMs: 300, retries: 1, transport },
      );
      expect(status).toMatchObject({ name: "Split", partial: true });
      expect(status.playerList.length).toBeLessThan(30);
    });

    it("Quake 3 accepts a reply whose OOB header is FE FF FF FF", async () => {
      onRequest = (_req, reply) =>
        reply(
          Buffer.from(
            '\xfe\xff\xff\xffstatusResponse\n\\sv_hostname\\Odd\\mapname\\q3dm1\n5 40 "x"\n',
            "latin1",
          ),
        );
      const status = await protocolAdapter("quake3").queryStatus(
        { host: "127.0.0.1", port },
        { ...FAST, transport },
      );
      expect(status).toMatchObject({ name: "Odd", map: "q3dm1", players: 1 });
    });

    it("Doom 3 ignores an answer that does not echo our challenge", async () => {
      onRequest = (_req, reply) => {
        reply(
          Buffer.concat([
            Buffer.from([0xff, 0xff]),
            Buffer.from("infoResponse\0", "latin1"),
            Buffer.from([9, 9, 9, 9, 0x29, 0, 1, 0]),
            Buffer.from("si_name\0x\0\0\0 \x07\0\0\0", "latin1"),
          ]),
        );
      };
      await expect(
        protocolAdapter("doom3").queryStatus(
          { host: "127.0.0.1", port },
          { timeoutMs: 150, retries: 0, transport },
        ),
      ).rejects.toMatchObject({ code: "TIMEOUT" });
    });
  });
});
