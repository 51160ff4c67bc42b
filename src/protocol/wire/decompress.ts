/**
 * bzip2 for compressed Source split responses (Valve's "Server Queries" page; docs/protocols.md "Split responses"): the
 * fragments of a response whose id has the high bit set join into a bzip2 stream; packet 0 gives the decompressed
 * size and its CRC32. Both are checked, and the output is capped so a small packet cannot expand
 * into a huge buffer (decoding stops at the cap instead of finishing and then checking).
 */
import { decode, type ByteSource } from "seek-bzip";
import { crc32 } from "node:zlib";
import { ProtocolError } from "../errors";
import { MAX_DECOMPRESSED_BYTES } from "../defaults";

class StopDecoding extends Error {}

/** Reads `input` and throws at its end: seek-bzip would otherwise read past it as zero bytes. */
function strictSource(input: Buffer): ByteSource {
  let position = 0;
  return {
    read(buffer: Buffer, offset: number, length: number): number {
      const n = Math.min(length, input.length - position);
      if (n <= 0) return -1;
      input.copy(buffer, offset, position, position + n);
      position += n;
      return n;
    },
    readByte(): number {
      const byte = input[position++];
      if (byte === undefined)
        throw new ProtocolError("DECOMPRESSION", `bzip2 data ends early (${input.length} bytes)`);
      return byte;
    },
    seek(next: number): void {
      position = next;
    },
    eof(): boolean {
      return position >= input.length;
    },
  };
}

/** Decompresses `input`, which must expand to exactly `expectedBytes` with CRC32 `expectedCrc32`. */
export function decompressBzip2(
  input: Buffer,
  expectedBytes: number,
  expectedCrc32: number,
  maxBytes: number = MAX_DECOMPRESSED_BYTES,
): Buffer {
  if (expectedBytes < 0 || expectedBytes > maxBytes) {
    throw new ProtocolError(
      "DECOMPRESSION",
      `declared decompressed size ${expectedBytes} is outside 0..${maxBytes}`,
    );
  }
  const output = Buffer.alloc(expectedBytes);
  let written = 0;
  const sink = {
    writeByte(byte: number): void {
      if (written >= expectedBytes) throw new StopDecoding();
      output[written++] = byte;
    },
  };
  try {
    decode(strictSource(input), sink);
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    if (err instanceof StopDecoding) {
      throw new ProtocolError(
        "DECOMPRESSION",
        `bzip2 data expands beyond the declared ${expectedBytes} bytes`,
      );
    }
    throw new ProtocolError(
      "DECOMPRESSION",
      `bzip2 data is invalid: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  if (written !== expectedBytes) {
    throw new ProtocolError(
      "DECOMPRESSION",
      `bzip2 data expands to ${written} bytes, the header declares ${expectedBytes}`,
    );
  }
  const actualCrc = crc32(output) >>> 0;
  if (actualCrc !== expectedCrc32 >>> 0) {
    throw new ProtocolError(
      "CHECKSUM",
      `CRC32 of the decompressed response is ${actualCrc.toString(16)}, the header declares ${(expectedCrc32 >>> 0).toString(16)}`,
    );
  }
  return output;
}
