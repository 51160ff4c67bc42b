import { ProtocolError } from "../errors";
import { PacketReader } from "../wire/packet-reader";
import { PacketWriter } from "../wire/packet-writer";
import { SINGLE_PACKET_HEADER, SPLIT_PACKET_HEADER } from "./constants";

/**
 * Opens a single-packet payload (FF FF FF FF + type byte + body): checks the header and returns a
 * reader positioned after the type byte. `accepted` lists the type bytes the caller can decode.
 */
export function openSinglePacket(
  payload: Buffer,
  accepted: readonly number[],
  what: string,
): { reader: PacketReader; type: number } {
  const reader = new PacketReader(payload);
  const header = reader.i32le("packet header");
  if (header !== SINGLE_PACKET_HEADER) {
    const hint =
      header === SPLIT_PACKET_HEADER
        ? " (a split fragment: reassemble it with SplitAssembler first)"
        : "";
    throw new ProtocolError(
      "MALFORMED",
      `${what}: header is 0x${(header >>> 0).toString(16)}, not FFFFFFFF${hint}`,
      { offset: 0 },
    );
  }
  const type = reader.u8("type byte");
  if (!accepted.includes(type)) {
    throw new ProtocolError(
      "UNEXPECTED_RESPONSE",
      `${what}: unexpected type byte 0x${type.toString(16).padStart(2, "0")}`,
      { offset: 4 },
    );
  }
  return { reader, type };
}

/** A writer that already holds FF FF FF FF and the type byte. */
export function startSinglePacket(type: number): PacketWriter {
  return new PacketWriter().i32le(SINGLE_PACKET_HEADER).u8(type);
}

/** Writes a text field: its exact bytes when a hex form was decoded (invalid UTF-8), else UTF-8. */
export function writeText(writer: PacketWriter, value: string, hex: string | undefined): void {
  writer.cstring(hex === undefined ? value : Buffer.from(hex, "hex"));
}

/** A raw wire character (server type, environment): one byte shown as its latin1 character. */
export function byteToChar(byte: number): string {
  return String.fromCharCode(byte);
}

/** The inverse of byteToChar, for encoders; anything but one latin1 character is INVALID_ARGUMENT. */
export function charToByte(char: string, what: string): number {
  const code = char.length === 1 ? char.charCodeAt(0) : -1;
  if (code < 0 || code > 0xff)
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      `${what} must be one latin1 character, got ${JSON.stringify(char)}`,
    );
  return code;
}

/** Challenges are echoed verbatim: always exactly 4 bytes. */
export function assertChallenge(challenge: Buffer): void {
  if (challenge.length !== 4)
    throw new ProtocolError("INVALID_ARGUMENT", `a challenge is 4 bytes, got ${challenge.length}`);
}

/**
 * A request as one buffer: `prefix` (header, type and any fixed body) then the 4 challenge bytes.
 * Requests go out several times per server queried; one allocation each instead of a writer's
 * chunks and their concatenation (docs/BENCHMARKS-history.md, query part).
 */
export function requestWithChallenge(prefix: Buffer, challenge: Buffer): Buffer {
  assertChallenge(challenge);
  const out = Buffer.allocUnsafe(prefix.length + 4);
  prefix.copy(out, 0);
  challenge.copy(out, prefix.length);
  return out;
}

/**
 * Runs an encoder, turning the RangeError a Buffer write throws for an out-of-range field (an app id
 * above 65535, a score beyond int32) into INVALID_ARGUMENT, so encoders fail with coded errors too.
 */
export function encoding(what: string, encode: () => Buffer): Buffer {
  try {
    return encode();
  } catch (err) {
    // By name, not instanceof: Node's own error classes differ from the ones in a vm realm (jest).
    const { name, message } = (typeof err === "object" && err !== null ? err : {}) as {
      name?: unknown;
      message?: unknown;
    };
    if (name === "RangeError")
      throw new ProtocolError(
        "INVALID_ARGUMENT",
        `${what}: a field is out of range for its wire type (${String(message)})`,
        { cause: err },
      );
    throw err;
  }
}
