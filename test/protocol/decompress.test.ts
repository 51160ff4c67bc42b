/**
 * decompressBzip2 sizes seek-bzip's per-block buffer from the declared size (5/4 of it, the most
 * bzip2's first run-length stage can need), not from the stream's level: these pin that bound.
 */
import { crc32 } from "node:zlib";
import { decompressBzip2, ProtocolError } from "../../src/protocol";
import { compressBzip2 } from "../../src/simulator/bzip2-compress";

/** Runs of exactly 4 equal bytes: each becomes 5 words in the block (4 bytes and a zero count), the densest case. */
function fourByteRuns(runs: number): Buffer {
  const out = Buffer.alloc(runs * 4);
  for (let r = 0; r < runs; r++) out.fill((r * 37) % 256, r * 4, r * 4 + 4);
  return out;
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof ProtocolError ? err.code : "not a ProtocolError";
  }
  return undefined;
}

describe("decompressBzip2 block buffer", () => {
  it("decodes blocks at the 5/4 bound: runs of 4 equal bytes, one block and several", () => {
    for (const runs of [1, 2, 3, 1000, 25_000]) {
      const input = fourByteRuns(runs);
      expect(decompressBzip2(compressBzip2(input), input.length, crc32(input))).toEqual(input);
    }
  });

  it("still refuses data that expands beyond the declared size, with DECOMPRESSION", () => {
    const input = fourByteRuns(1000);
    const compressed = compressBzip2(input);
    for (const declared of [0, 1, 100, input.length - 1]) {
      expect(codeOf(() => decompressBzip2(compressed, declared, crc32(input)))).toBe(
        "DECOMPRESSION",
      );
    }
  });
});
