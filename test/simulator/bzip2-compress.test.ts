/** Our bzip2 compressor: seek-bzip (and libbzip2's `bzip2 -d`, where installed) decode it to the input. */
import { spawnSync } from "node:child_process";
import { crc32 } from "node:zlib";
import fc from "fast-check";
import { decompressBzip2 } from "../../src/protocol";
import { compressBzip2 } from "../../src/simulator/bzip2-compress";

const roundTrip = (input: Buffer): Buffer =>
  decompressBzip2(compressBzip2(input), input.length, crc32(input));
const hasBzip2 = spawnSync("bzip2", ["--help"]).error === undefined;

describe("compressBzip2", () => {
  it("round-trips through seek-bzip: empty, runs (RLE1 at 4, 255, 256), periodic and binary data", () => {
    const cases = [
      Buffer.alloc(0),
      Buffer.from("a"),
      Buffer.alloc(4, 0x61),
      Buffer.alloc(255, 0x61),
      Buffer.alloc(256, 0x61),
      Buffer.alloc(3000, 0),
      Buffer.from("ab".repeat(5000)),
      Buffer.from("abcabcabd".repeat(700)),
      Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251)),
    ];
    for (const input of cases) expect(roundTrip(input)).toEqual(input);
  });

  it("spans several blocks for inputs over 99 kB of RLE output", () => {
    const input = Buffer.from(Array.from({ length: 250_000 }, (_, i) => (i * 2654435761) >>> 24));
    expect(roundTrip(input)).toEqual(input);
  });

  it("round-trips arbitrary bytes (property)", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 4000 }),
        fc.integer({ min: 0, max: 3 }),
        (bytes, repeat) => {
          const input = Buffer.concat(Array.from({ length: repeat + 1 }, () => Buffer.from(bytes)));
          expect(roundTrip(input)).toEqual(input);
        },
      ),
      { seed: 4242, numRuns: 200 },
    );
  });

  (hasBzip2 ? it : it.skip)("is a stream libbzip2 accepts (bzip2 -d)", () => {
    for (const input of [
      Buffer.from("hello ".repeat(300)),
      Buffer.from(Array.from({ length: 150_000 }, (_, i) => (i * 31) % 256)),
    ]) {
      const result = spawnSync("bzip2", ["-d", "-c"], {
        input: compressBzip2(input),
        maxBuffer: 1 << 24,
      });
      expect(result.status).toBe(0);
      expect(result.stdout).toEqual(input);
    }
  });
});
