import {
  ProtocolError,
  MasterFilter,
  buildMasterFilter,
  ALL_MASTER_REGION_CODES,
  FIRST_SEED,
  decodeMasterQuery,
  decodeMasterResponse,
  encodeMasterQuery,
  encodeMasterResponse,
  parseIpv4Address,
} from "../../../src/protocol";

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ""), "hex");

describe("Valve master codec", () => {
  it("encodes a request byte for byte in the Master Server Query Protocol layout (Asia, dedicated, VAC, hl2mp, not empty)", () => {
    const filter = buildMasterFilter([
      MasterFilter.type("d"),
      MasterFilter.secure(),
      MasterFilter.gamedir("hl2mp"),
      MasterFilter.notEmpty(),
    ]);
    const packet = encodeMasterQuery({ region: 0x04, seed: FIRST_SEED, filter });
    expect(packet).toEqual(
      hex(`31 04 30 2E 30 2E 30 2E 30 3A 30 00 5C 74 79 70 65 5C 64 5C 73 65 63 75 72 65 5C 31 5C 67 61 6D
           65 64 69 72 5C 68 6C 32 6D 70 5C 65 6D 70 74 79 5C 31 00`),
    );
    expect(decodeMasterQuery(packet)).toEqual({
      region: 4,
      seed: FIRST_SEED,
      filter: "\\type\\d\\secure\\1\\gamedir\\hl2mp\\empty\\1",
    });
  });

  it("decodes a reply: one server, port big-endian, then the end marker", () => {
    expect(
      decodeMasterResponse(hex("FF FF FF FF 66 0A C0 A8 01 01 69 87 00 00 00 00 00 00")),
    ).toEqual({
      addresses: [{ host: "192.168.1.1", port: 27015 }],
      end: true,
    });
  });

  it("reads octets and ports unsigned and reports a batch without end marker as not ended", () => {
    const batch = decodeMasterResponse(hex("FFFFFFFF660A FFFEFDFC FFFF 01020304 0001"));
    expect(batch).toEqual({
      addresses: [
        { host: "255.254.253.252", port: 65535 },
        { host: "1.2.3.4", port: 1 },
      ],
      end: false,
    });
  });

  it("round-trips a full 231-entry page through encode and decode", () => {
    const addresses = Array.from({ length: 231 }, (_, i) => ({
      host: `10.0.${i >> 8}.${i & 255}`,
      port: 27015 + i,
    }));
    const packet = encodeMasterResponse(addresses, false);
    expect(packet.length).toBe(6 + 231 * 6);
    expect(decodeMasterResponse(packet)).toEqual({ addresses, end: false });
    expect(decodeMasterResponse(encodeMasterResponse([], true))).toEqual({
      addresses: [],
      end: true,
    });
  });

  it("refuses a bad header and a ragged entry area with coded errors", () => {
    expect(() => decodeMasterResponse(hex("FFFFFFFF6600"))).toThrow(
      expect.objectContaining({ code: "UNEXPECTED_RESPONSE" }),
    );
    expect(() => decodeMasterResponse(hex("FFFFFFFF660A 01020304 00"))).toThrow(
      expect.objectContaining({ code: "MALFORMED", offset: 6 }),
    );
    expect(() => decodeMasterResponse(hex("FFFFFF"))).toThrow(
      expect.objectContaining({ code: "TRUNCATED" }),
    );
  });

  it("every truncation of a valid reply gives a value or a ProtocolError, never a crash", () => {
    const packet = encodeMasterResponse([{ host: "1.2.3.4", port: 27015 }], true);
    for (let length = 0; length <= packet.length; length++) {
      try {
        decodeMasterResponse(packet.subarray(0, length));
      } catch (err) {
        expect(err).toBeInstanceOf(ProtocolError);
      }
    }
  });

  it("checks seeds and regions", () => {
    expect(parseIpv4Address("10.1.2.3:27016")).toEqual({ host: "10.1.2.3", port: 27016 });
    expect(() => parseIpv4Address("10.1.2:27016")).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
    expect(() => parseIpv4Address("10.1.2.3:70000")).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
    expect(() => encodeMasterQuery({ region: 256, seed: FIRST_SEED, filter: "" })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
    expect(ALL_MASTER_REGION_CODES).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 0xff]);
  });
});
