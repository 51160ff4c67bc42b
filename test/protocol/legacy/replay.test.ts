/**
 * Real captured replies through the real query path: a loopback server answers each request with a
 * capture's datagrams (ids and challenges rewritten to match the request, as the real server would
 * have echoed them), and the registry query must give what decoding the capture directly gives.
 */
import dgram from "node:dgram";
import {
  decodeLegacyStatus,
  type LegacyProtocol,
  protocolAdapter,
  UdpTransport,
  type ServerStatus,
} from "../../../src/protocol";
import { describeWithShared } from "../../helpers/shared-dir";
import { loadLegacyCaptures, packetsOf } from "./capture-files";
import type { LegacyCapture } from "./capture-files";

const REPLAYED: Record<string, LegacyProtocol> = {
  quake3: "quake3",
  quake2: "quake2",
  gamespy1: "gamespy1",
  gamespy3: "gamespy3",
  doom3: "doom3",
  "doom3-quake4": "doom3",
  "doom3-etqw": "doom3",
  ase: "ase",
  "halflife-won": "halflife",
  "goldsrc-a2s": "halflife",
};

/** Half-Life: the capture's reply to each command (`details` → m/I, `players` → D, `rules` → E, split or not). */
function halfLifeAnswer(packets: Buffer[], request: Buffer): Buffer[] {
  const command = request.subarray(4).toString("latin1").replace(/\0+$/, "");
  const type = (p: Buffer): string => (p[0] === 0xfe ? "split" : String.fromCharCode(p[4] ?? 0));
  const wanted: Record<string, string[]> = {
    details: ["m", "I", "C"],
    players: ["D"],
    rules: ["E", "split"],
  };
  const matching = packets.filter((p) => (wanted[command] ?? []).includes(type(p)));
  return command === "rules" ? matching : matching.slice(0, 1);
}

/** What the server would have sent to this request: the capture with the request's id or challenge echoed. */
function answer(capture: LegacyCapture, request: Buffer): Buffer[] {
  const packets = packetsOf(capture);
  switch (REPLAYED[capture.protocol]) {
    case "gamespy3": {
      const id = request.subarray(3, 7);
      if (request[2] === 0x09)
        return [Buffer.concat([Buffer.from([0x09]), id, Buffer.from("0\0", "latin1")])];
      return packets.map((p) => Buffer.concat([p.subarray(0, 1), id, p.subarray(5)]));
    }
    case "doom3": {
      const challenge = request.subarray(request.indexOf(0, 2) + 1, request.indexOf(0, 2) + 5);
      return packets.map((p) => {
        const at = p.indexOf(0, 2) + 1;
        return Buffer.concat([p.subarray(0, at), challenge, p.subarray(at + 4)]);
      });
    }
    case "halflife":
      return halfLifeAnswer(packets, request);
    default:
      return packets;
  }
}

const comparable = (s: ServerStatus): Omit<ServerStatus, "pingMs"> => {
  const { pingMs: _pingMs, ...rest } = s;
  return rest;
};

describeWithShared("captured replies through the query path", (sharedDir) => {
  const captures = loadLegacyCaptures(sharedDir).filter((c) => REPLAYED[c.protocol] !== undefined);
  let socket: dgram.Socket;
  let transport: UdpTransport;
  let current: LegacyCapture | null = null;

  beforeAll(async () => {
    transport = new UdpTransport({ bindAddress4: "127.0.0.1", bindAddress6: "::1" });
    socket = dgram.createSocket("udp4");
    socket.on("message", (request, rinfo) => {
      if (current === null) return;
      for (const d of answer(current, request)) socket.send(d, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    await transport.close();
  });

  it.each(captures.map((c) => [c.file, c] as const))("%s", async (_file, capture) => {
    current = capture;
    const protocol = REPLAYED[capture.protocol]!;
    const status = await protocolAdapter(protocol).queryStatus(
      { host: "127.0.0.1", port: socket.address().port },
      { timeoutMs: 1000, retries: 0, transport },
    );
    expect(status.pingMs).toEqual(expect.any(Number));
    const direct = decodeLegacyStatus(protocol, packetsOf(capture));
    expect(comparable(status)).toEqual(comparable(direct));
  });
});
