/**
 * Every prefix of every captured datagram decodes to a value or a ProtocolError (never another
 * exception), and the strict binary decoders say TRUNCATED with the offset where the data ran out.
 */
import { ProtocolError } from "../../../src/protocol";
import { decodeAseResponse } from "../../../src/protocol/legacy/ase";
import { decodeDoom3Response } from "../../../src/protocol/legacy/doom3";
import { decodeGamespy1Datagram } from "../../../src/protocol/legacy/gamespy1";
import { decodeGamespy2Response } from "../../../src/protocol/legacy/gamespy2";
import { decodeGamespy3Datagram, decodeJc2mpResponse } from "../../../src/protocol/legacy/gamespy3";
import { decodeHalfLifeMessage } from "../../../src/protocol/legacy/halflife";
import { decodeQuakeResponse } from "../../../src/protocol/legacy/quake3";
import { describeWithShared } from "../../helpers/shared-dir";
import { loadLegacyCaptures, packetsOf } from "./capture-files";

function outcome(decode: () => unknown): "value" | ProtocolError {
  try {
    decode();
    return "value";
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
}

const DECODERS: Record<string, (p: Buffer) => unknown> = {
  quake3: decodeQuakeResponse,
  quake2: decodeQuakeResponse,
  gamespy1: decodeGamespy1Datagram,
  gamespy2: (p) => decodeGamespy2Response(p),
  gamespy3: decodeGamespy3Datagram,
  "gamespy3-jc2mp": decodeJc2mpResponse,
  doom3: decodeDoom3Response,
  "doom3-quake4": decodeDoom3Response,
  "doom3-etqw": decodeDoom3Response,
  "doom3-etqw-infoex": decodeDoom3Response,
  ase: decodeAseResponse,
  "halflife-won": (p) => (p[0] === 0xfe ? undefined : decodeHalfLifeMessage(p)),
  "goldsrc-a2s": (p) => (p[0] === 0xfe ? undefined : decodeHalfLifeMessage(p)),
};

describeWithShared("truncated captures", (sharedDir) => {
  const captures = loadLegacyCaptures(sharedDir);

  it.each(captures.map((c) => [c.file, c] as const))(
    "%s: every prefix is a value or a ProtocolError",
    (_f, c) => {
      const decode = DECODERS[c.protocol]!;
      for (const packet of packetsOf(c)) {
        const step = Math.max(1, Math.floor(packet.length / 300));
        for (let length = 0; length < packet.length; length += step) {
          const result = outcome(() => decode(packet.subarray(0, length)));
          if (result !== "value")
            expect(result.code).toMatch(/^(TRUNCATED|MALFORMED|UNEXPECTED_RESPONSE)$/);
        }
      }
    },
  );

  it.each(
    captures
      .filter((c) => /^doom3|^ase$|^gamespy3-jc2mp$/.test(c.protocol))
      .map((c) => [c.file, c] as const),
  )(
    "%s: a binary reply cut anywhere is TRUNCATED (or a layout mismatch) at an offset inside the packet",
    (_f, c) => {
      const [packet] = packetsOf(c);
      // Quake 4's unknown bytes after the OS mask are kept as trailing: a cut inside them still decodes.
      const trailingBytes = c.protocol.startsWith("doom3")
        ? decodeDoom3Response(packet!).trailing.length
        : 0;
      for (let length = 0; length < packet!.length - trailingBytes; length += 7) {
        const result = outcome(() => DECODERS[c.protocol]!(packet!.subarray(0, length)));
        if (c.protocol === "ase" && result === "value") continue; // the player list ends where the datagram does
        expect(result).toBeInstanceOf(ProtocolError);
        const err = result as ProtocolError;
        expect(["TRUNCATED", "MALFORMED"]).toContain(err.code);
        if (err.offset !== undefined) expect(err.offset).toBeLessThanOrEqual(length);
      }
    },
  );
});

describe("truncation of constructed replies", () => {
  it("reports the offset where a Doom 3 dictionary runs out", () => {
    const packet = Buffer.concat([
      Buffer.from([0xff, 0xff]),
      Buffer.from("infoResponse\0", "latin1"),
      Buffer.from([1, 0, 0, 0, 0x29, 0, 1, 0]),
      Buffer.from("si_name\0Bo", "latin1"),
    ]);
    expect(() => decodeDoom3Response(packet)).toThrow(
      expect.objectContaining({ code: "TRUNCATED", offset: 31 }),
    );
  });

  it("says TRUNCATED for a Quake 3 player line without its closing quote at the end", () => {
    const packet = Buffer.from('\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 "cut', "latin1");
    expect(() => decodeQuakeResponse(packet)).toThrow(
      expect.objectContaining({ code: "TRUNCATED" }),
    );
    const middle = Buffer.from(
      '\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 nope\n3 4 "ok"\n',
      "latin1",
    );
    expect(() => decodeQuakeResponse(middle)).toThrow(
      expect.objectContaining({ code: "MALFORMED" }),
    );
  });

  it("says TRUNCATED for a GameSpy v2 player count promising more rows than sent", () => {
    const packet = Buffer.concat([
      Buffer.from([0, 1, 2, 3, 4, 0, 5]),
      Buffer.from("player_\0\0a\0b\0", "latin1"),
    ]);
    expect(() =>
      decodeGamespy2Response(packet, { server: false, players: true, teams: false }),
    ).toThrow(expect.objectContaining({ code: "TRUNCATED" }));
  });

  it("says TRUNCATED for an ASE pstr longer than the datagram", () => {
    expect(() => decodeAseResponse(Buffer.from("EYE1\x07far", "latin1"))).toThrow(
      expect.objectContaining({ code: "TRUNCATED", offset: 5 }),
    );
    expect(() => decodeAseResponse(Buffer.from("EY", "latin1"))).toThrow(
      expect.objectContaining({ code: "TRUNCATED" }),
    );
    expect(() => decodeAseResponse(Buffer.from("XYZ1", "latin1"))).toThrow(
      expect.objectContaining({ code: "UNEXPECTED_RESPONSE" }),
    );
  });
});
