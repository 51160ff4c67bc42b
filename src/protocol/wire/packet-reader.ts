import { isAscii } from "node:buffer";
import { ProtocolError } from "../errors";

const utf8Decoder = new TextDecoder("utf-8", { fatal: false });
const strictUtf8Decoder = new TextDecoder("utf-8", { fatal: true });

/** A decoded string plus its exact bytes when they were not valid UTF-8. */
export interface DecodedString {
  value: string;
  /** Hex of the exact wire bytes; present only when they are not valid UTF-8. */
  hex?: string;
}

/**
 * A strict, bounds-checked cursor over one packet. Every read past the end throws a
 * ProtocolError with code TRUNCATED and the offset where the read started; nothing is
 * ever defaulted to 0 or ''.
 */
export class PacketReader {
  private position: number;
  /** The whole packet as latin1 text, made at the first ASCII string read (cstringAscii says why). */
  private text: string | undefined;

  constructor(
    readonly buffer: Buffer,
    offset = 0,
  ) {
    this.position = offset;
  }

  get offset(): number {
    return this.position;
  }

  get remaining(): number {
    return this.buffer.length - this.position;
  }

  get atEnd(): boolean {
    return this.position >= this.buffer.length;
  }

  private need(bytes: number, what: string): number {
    const start = this.position;
    if (start + bytes > this.buffer.length) {
      throw new ProtocolError(
        "TRUNCATED",
        `packet ends before ${what} (need ${bytes} bytes at offset ${start}, have ${this.buffer.length - start})`,
        { offset: start },
      );
    }
    this.position = start + bytes;
    return start;
  }

  // The fixed-size reads index the buffer themselves once need() has checked the bounds: Buffer's
  // readUInt8 and the like check them again and validate the offset's type on every call.
  u8(what = "byte"): number {
    return this.buffer[this.need(1, what)] as number;
  }

  i8(what = "byte"): number {
    return this.buffer.readInt8(this.need(1, what));
  }

  u16le(what = "uint16"): number {
    const at = this.need(2, what);
    const b = this.buffer;
    return (b[at] as number) | ((b[at + 1] as number) << 8);
  }

  u16be(what = "uint16"): number {
    return this.buffer.readUInt16BE(this.need(2, what));
  }

  i16le(what = "int16"): number {
    return this.buffer.readInt16LE(this.need(2, what));
  }

  i32le(what = "int32"): number {
    return this.int32At(this.need(4, what));
  }

  /** The signed little-endian 32 bits at `at`, which need() has checked. */
  private int32At(at: number): number {
    const b = this.buffer;
    return (
      (b[at] as number) |
      ((b[at + 1] as number) << 8) |
      ((b[at + 2] as number) << 16) |
      ((b[at + 3] as number) << 24)
    );
  }

  u32le(what = "uint32"): number {
    return this.i32le(what) >>> 0;
  }

  u32be(what = "uint32"): number {
    return this.buffer.readUInt32BE(this.need(4, what));
  }

  /**
   * A little-endian uint64 as a decimal string (SteamIDs, game ids). Values below 2^53 (every game id
   * of a Steam game) are made from two 32-bit halves as a Number, without a BigInt and its toString.
   */
  u64leDecimal(what = "uint64"): string {
    const at = this.need(8, what);
    const low = this.int32At(at) >>> 0;
    const high = this.int32At(at + 4) >>> 0;
    if (high < 0x200000) return String(high * 0x100000000 + low);
    return this.buffer.readBigUInt64LE(at).toString();
  }

  f32le(what = "float32"): number {
    return this.buffer.readFloatLE(this.need(4, what));
  }

  bytes(length: number, what = "bytes"): Buffer {
    if (length < 0)
      throw new ProtocolError("MALFORMED", `negative length for ${what}`, {
        offset: this.position,
      });
    const start = this.need(length, what);
    return this.buffer.subarray(start, start + length);
  }

  rest(): Buffer {
    const start = this.position;
    this.position = this.buffer.length;
    return this.buffer.subarray(start);
  }

  skip(length: number, what = "bytes"): void {
    this.need(length, what);
  }

  /** Bytes up to (not including) the next NUL; the NUL is consumed. Throws TRUNCATED without one. */
  cstringBytes(what = "string"): Buffer {
    const start = this.position;
    const end = this.buffer.indexOf(0, start);
    if (end < 0) {
      throw new ProtocolError(
        "TRUNCATED",
        `packet ends inside ${what} (no NUL terminator after offset ${start})`,
        { offset: start },
      );
    }
    this.position = end + 1;
    return this.buffer.subarray(start, end);
  }

  /** A NUL-terminated string decoded as UTF-8 with U+FFFD replacement. */
  cstring(what = "string"): string {
    const ascii = this.cstringAscii();
    return ascii ?? utf8Decoder.decode(this.cstringBytes(what));
  }

  /** A NUL-terminated string, with its exact bytes in hex when they are not valid UTF-8. */
  cstringExact(what = "string"): DecodedString {
    const ascii = this.cstringAscii();
    return ascii === null ? decodeUtf8Exact(this.cstringBytes(what)) : { value: ascii };
  }

  /**
   * The next NUL-terminated string when it is pure ASCII (nearly every name, map and folder), read
   * without a TextDecoder call or a subarray (the decoder's fixed cost dominates short strings);
   * null, with the position unchanged, when it holds a byte >= 0x80 or has no NUL (the caller then
   * takes the general path, which also reports TRUNCATED). The string is a slice of the whole packet
   * decoded once: a Buffer toString per string crosses into C++ each time, which was about a third of
   * an A2S_INFO decode (docs/BENCHMARKS-history.md, 2026-12-07, "the decoders' strings").
   */
  private cstringAscii(): string | null {
    const buf = this.buffer;
    const start = this.position;
    const length = buf.length;
    for (let i = start; i < length; i++) {
      const b = buf[i] as number;
      if (b === 0) {
        this.position = i + 1;
        this.text ??= buf.toString("latin1");
        return this.text.slice(start, i);
      }
      if (b >= 0x80) return null;
    }
    return null;
  }

  /**
   * Every NUL-terminated string from here to the end of the packet, when what is left is pure ASCII
   * (nearly every rules list): one native check, one decode and one split instead of a scan and a
   * decode per string, which was most of a rules reply's decoding time (docs/BENCHMARKS-history.md, query
   * part). `tail` is what follows the last NUL: "" when the packet ends with one. Null, with the
   * position unchanged, when a byte >= 0x80 is left: the caller then reads string by string.
   */
  cstringsAsciiToEnd(): { strings: string[]; tail: string } | null {
    const rest = this.buffer.subarray(this.position);
    if (!isAscii(rest)) return null;
    this.position = this.buffer.length;
    const strings = rest.toString("latin1").split("\0");
    const tail = strings.pop() as string;
    return { strings, tail };
  }

  /** A NUL-terminated string decoded byte for byte (latin1), as the older protocols need. */
  cstringLatin1(what = "string"): string {
    return this.cstringBytes(what).toString("latin1");
  }

  peekU8(): number | undefined {
    return this.buffer[this.position];
  }
}

/** Lenient UTF-8 (U+FFFD for bad sequences) plus the exact bytes when they were not valid. */
export function decodeUtf8Exact(bytes: Buffer): DecodedString {
  try {
    return { value: strictUtf8Decoder.decode(bytes) };
  } catch {
    return { value: utf8Decoder.decode(bytes), hex: bytes.toString("hex") };
  }
}

export function decodeUtf8Lenient(bytes: Buffer): string {
  return utf8Decoder.decode(bytes);
}
