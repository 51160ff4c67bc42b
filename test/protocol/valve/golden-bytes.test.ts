/**
 * Golden bytes typed by hand from the packet layouts on Valve's Server Queries page: the older A2S exchange
 * (GETCHALLENGE, INFO with an example reply, the GoldSrc split byte) and A2A_PING with the Source split
 * headers, plain and compressed. They pin the wire format independently of our own encoders.
 */
import {
  decodeDatagrams,
  decodeRequest,
  decodeResponse,
  encodeChallengeResponse,
  encodeGetChallengeRequest,
  encodeInfoRequest,
  encodeInfoResponse,
  encodePingRequest,
  encodePingResponse,
  encodePlayerRequest,
  encodeRulesRequest,
  SplitAssembler,
} from "../../../src/protocol";
import { splitResponse } from "../../../src/simulator/split-response";

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");

describe("A2S requests and replies, GoldSrc split", () => {
  it("A2S_SERVERQUERY_GETCHALLENGE request is FF FF FF FF 57", () => {
    expect(encodeGetChallengeRequest()).toEqual(hex("FF FF FF FF 57"));
    expect(decodeRequest(hex("FF FF FF FF 57"))).toEqual({ kind: "getchallenge" });
  });

  it("decodes the challenge reply FF FF FF FF 41 32 42 59 45 and echoes its bytes", () => {
    const reply = hex("FF FF FF FF 41 32 42 59 45");
    expect(decodeResponse(reply)).toEqual({
      kind: "challenge",
      value: { challenge: 0x45594232, challengeHex: "32425945" },
    });
    expect(encodeChallengeResponse(hex("32 42 59 45"))).toEqual(reply);
    expect(encodePlayerRequest(hex("32 42 59 45"))).toEqual(hex("FF FF FF FF 55 32 42 59 45"));
    expect(encodeRulesRequest(hex("32 42 59 45"))).toEqual(hex("FF FF FF FF 56 32 42 59 45"));
  });

  it('A2S_INFO request is FF FF FF FF 54 "Source Engine Query\\0"', () => {
    const request = hex(
      "FF FF FF FF 54 53 6F 75 72 63 65 20 45 6E 67 69 6E 65 20 51 75 65 72 79 00",
    );
    expect(encodeInfoRequest()).toEqual(request);
    expect(decodeRequest(request)).toEqual({ kind: "info" });
  });

  const infoReply = hex(`
    FF FF FF FF 49 02 67 61 6D 65 32 78 73 2E 63 6F
    6D 20 43 6F 75 6E 74 65 72 2D 53 74 72 69 6B 65
    20 53 6F 75 72 63 65 20 23 31 00 64 65 5F 64 75
    73 74 00 63 73 74 72 69 6B 65 00 43 6F 75 6E 74
    65 72 2D 53 74 72 69 6B 65 3A 20 53 6F 75 72 63
    65 00 F0 00 05 10 04 64 6C 00 00 31 2E 30 2E 30
    2E 32 32 00`);
  const infoValue = {
    type: "source",
    protocol: 2,
    name: "game2xs.com Counter-Strike Source #1",
    map: "de_dust",
    folder: "cstrike",
    game: "Counter-Strike: Source",
    appId: 240,
    players: 5,
    maxPlayers: 16,
    bots: 4,
    serverType: "d",
    environment: "l",
    visibility: 0,
    vac: 0,
    version: "1.0.0.22",
  } as const;

  it("decodes the A2S_INFO reply example to its values (no EDF byte)", () => {
    expect(decodeResponse(infoReply)).toEqual({ kind: "info", value: infoValue });
    expect(encodeInfoResponse(infoValue)).toEqual(infoReply);
  });

  it("reads the GoldSrc split byte 0x3E as packet 3 of 14", () => {
    const payload = Buffer.concat([hex("FF FF FF FF"), Buffer.alloc(14 * 100 - 4, 0x41)]);
    const fragments = splitResponse(payload, { format: "goldsrc", id: 7, maxPacketBytes: 100 });
    expect(fragments).toHaveLength(14);
    expect(fragments[3]?.subarray(0, 9)).toEqual(hex("FE FF FF FF 07 00 00 00 3E"));
    const assembler = new SplitAssembler();
    const results = fragments.reverse().map((f) => assembler.push(f));
    expect(results.slice(0, 13).every((r) => r === null)).toBe(true);
    expect(results[13]).toEqual(payload);
  });
});

describe("A2A_PING and Source split packets", () => {
  it("A2A_PING is FF FF FF FF 69, answered by 6A + fourteen zeros", () => {
    expect(encodePingRequest()).toEqual(hex("FF FF FF FF 69"));
    expect(decodeRequest(hex("FF FF FF FF 69"))).toEqual({ kind: "ping" });
    const reply = hex("FF FF FF FF 6A 30 30 30 30 30 30 30 30 30 30 30 30 30 30 00");
    expect(encodePingResponse()).toEqual(reply);
    expect(decodeResponse(reply)).toEqual({ kind: "ping", value: {} });
  });

  it("Source split header: count, number, size 1248 (0x04E0); fragments reassemble by number", () => {
    const payload = Buffer.concat([hex("FF FF FF FF 45 00 00"), Buffer.alloc(3000, 0x61)]);
    const fragments = splitResponse(payload, { format: "source", id: 0x33c });
    expect(fragments).toHaveLength(3);
    expect(fragments[1]?.subarray(0, 12)).toEqual(hex("FE FF FF FF 3C 03 00 00 03 01 E0 04"));
    expect(decodeDatagrams([fragments[2]!, fragments[0]!, fragments[1]!]).kind).toBe("rules");
  });

  it("compressed: id high bit set, packet 0 carries decompressed size and CRC32", () => {
    const payload = Buffer.concat([
      hex("FF FF FF FF 45 01 00 61 00"),
      Buffer.alloc(4000, 0x62),
      hex("00"),
    ]);
    const fragments = splitResponse(payload, {
      format: "source",
      id: 5,
      compress: true,
      sizeField: false,
      maxPacketBytes: 40,
    });
    expect(fragments[0]?.readUInt32LE(4)).toBe(0x80000005);
    expect(fragments[0]?.readInt32LE(10)).toBe(payload.length);
    expect(fragments[0]?.subarray(18, 21).toString("latin1")).toBe("BZh");
    expect(decodeDatagrams(fragments)).toEqual({
      kind: "rules",
      value: { count: 1, rules: [{ name: "a", value: "b".repeat(4000) }] },
    });
  });
});
