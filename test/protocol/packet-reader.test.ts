import { ProtocolError } from "../../src/protocol";
import { PacketReader } from "../../src/protocol/wire/packet-reader";

describe("PacketReader", () => {
  it("reads little-endian integers, floats and C strings", () => {
    const buf = Buffer.from("010200030007686900" + "0000803f", "hex");
    const r = new PacketReader(buf);
    expect(r.u8()).toBe(1);
    expect(r.u16le()).toBe(2);
    expect(r.u16le()).toBe(3);
    expect(r.u8()).toBe(7);
    expect(r.cstring()).toBe("hi");
    expect(r.f32le()).toBe(1);
    expect(r.atEnd).toBe(true);
  });

  it("throws TRUNCATED with the offset on a read past the end", () => {
    const r = new PacketReader(Buffer.from([1, 2, 3]));
    r.u8();
    try {
      r.i32le();
      throw new Error("expected a throw");
    } catch (err) {
      expect(err).toBeInstanceOf(ProtocolError);
      expect((err as ProtocolError).code).toBe("TRUNCATED");
      expect((err as ProtocolError).offset).toBe(1);
    }
  });

  it("throws TRUNCATED for a string without a NUL", () => {
    const r = new PacketReader(Buffer.from("abc"));
    expect(() => r.cstring()).toThrow(expect.objectContaining({ code: "TRUNCATED", offset: 0 }));
  });

  it("reads the ASCII strings to the end in one go, with what follows the last NUL", () => {
    const r = new PacketReader(Buffer.from("07610062630000642d65", "hex"), 1);
    expect(r.cstringsAsciiToEnd()).toEqual({ strings: ["a", "bc", ""], tail: "d-e" });
    expect(r.atEnd).toBe(true);
    const whole = new PacketReader(Buffer.from("610000", "hex"));
    expect(whole.cstringsAsciiToEnd()).toEqual({ strings: ["a", ""], tail: "" });
  });

  it("leaves a rest with a byte >= 0x80 to the string-by-string reads", () => {
    const r = new PacketReader(Buffer.from("610062ff00", "hex"));
    expect(r.cstringsAsciiToEnd()).toBeNull();
    expect(r.offset).toBe(0);
    expect(r.cstring()).toBe("a");
  });

  it("keeps the exact bytes of invalid UTF-8", () => {
    const r = new PacketReader(Buffer.from([0x61, 0xff, 0x62, 0]));
    expect(r.cstringExact()).toEqual({ value: "a\ufffdb", hex: "61ff62" });
  });

  it("reads ASCII strings at their own offsets among UTF-8 strings and binary fields", () => {
    // "héllo" in UTF-8, then a float whose bytes are >= 0x80, then ASCII, a byte, ASCII at the end.
    const buf = Buffer.concat([
      Buffer.from("68c3a96c6c6f00", "hex"),
      Buffer.from("cdcccc3d", "hex"),
      Buffer.from("de_dust2\0", "latin1"),
      Buffer.from([0xfe]),
      Buffer.from("csgo\0", "latin1"),
    ]);
    const r = new PacketReader(buf);
    expect(r.cstringExact()).toEqual({ value: "h\u00e9llo" });
    expect(r.f32le()).toBeCloseTo(0.1);
    expect(r.cstringExact()).toEqual({ value: "de_dust2" });
    expect(r.u8()).toBe(0xfe);
    expect(r.cstring()).toBe("csgo");
    expect(r.atEnd).toBe(true);
  });

  it("reads 32-bit integers of either sign and uint64s as exact decimal strings", () => {
    const r = new PacketReader(Buffer.from("feffffff" + "feffffff" + "ff7f", "hex"));
    expect(r.i32le()).toBe(-2);
    expect(r.u32le()).toBe(0xfffffffe);
    expect(r.u16le()).toBe(0x7fff);
    const u64 = (value: bigint): string => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(value);
      return new PacketReader(b).u64leDecimal();
    };
    for (const value of [
      0n,
      730n,
      2n ** 53n - 1n,
      2n ** 53n,
      2n ** 53n + 1n,
      76561198000000001n,
      2n ** 64n - 1n,
    ])
      expect(u64(value)).toBe(value.toString());
    expect(() => new PacketReader(Buffer.alloc(7)).u64leDecimal()).toThrow(
      expect.objectContaining({ code: "TRUNCATED", offset: 0 }),
    );
  });
});
