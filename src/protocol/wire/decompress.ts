/**
 * bzip2 for compressed Source split responses (Valve's "Server Queries" page; docs/protocols.md "Split responses"): the
 * fragments of a response whose id has the high bit set join into a bzip2 stream; packet 0 gives the decompressed
 * size and its CRC32. Both are checked, and the output is capped so a small packet cannot expand
 * into a huge buffer (decoding stops at the cap instead of finishing and then checking).
 */
import Bunzip, { type ByteSink, type ByteSource } from "seek-bzip";
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

/**
 * Runs seek-bzip's decode loop (Bunzip.decode in its lib/index.js) with the per-block buffer sized
 * for this response instead of for the stream's level: seek-bzip allocates and zeroes 100,000 x level
 * 32-bit words per block (3.6 MB for "BZh9", 400 kB for "BZh1") however small the block, which made
 * the few compressed replies of a crawl a large share of its CPU and of its garbage collections
 * (docs/BENCHMARKS-history.md, query part). A block of n words expands to at least 4n/5 bytes (bzip2's first
 * run-length stage turns at most 5 bytes back into 4), so a block larger than 5/4 of the declared
 * size could only expand beyond it: refusing it at the smaller buffer refuses nothing valid.
 */
function decodeInto(source: ByteSource, sink: ByteSink, expectedBytes: number): void {
  const bz = new Bunzip(source, sink);
  bz.dbufSize = Math.min(bz.dbufSize, Math.ceil((expectedBytes * 5) / 4) + 8);
  while (!source.eof()) {
    if (bz._init_block()) {
      bz._read_bunzip();
      continue;
    }
    const streamCrc = bz.reader.read(32) >>> 0;
    if (streamCrc !== bz.streamCRC)
      throw new Error(
        `Bad stream CRC (got ${bz.streamCRC.toString(16)} expected ${streamCrc.toString(16)})`,
      );
    return;
  }
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
    decodeInto(strictSource(input), sink, expectedBytes);
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
