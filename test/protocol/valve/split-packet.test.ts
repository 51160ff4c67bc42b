/** The split assembler's checks: caps, CRC32, declared size, inconsistent fragments, eviction, late duplicates. */
import { decodeDatagrams, SplitAssembler, type ProtocolError } from "../../../src/protocol";
import { splitResponse } from "../../../src/simulator/split-response";

const rules = Buffer.concat([
  Buffer.from("ffffffff450100", "hex"),
  Buffer.from("name\0"),
  Buffer.alloc(5000, 0x76),
  Buffer.from([0]),
]);

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as ProtocolError).code;
  }
  return undefined;
}

describe("SplitAssembler", () => {
  it("returns a single-packet datagram as it is", () => {
    const single = Buffer.from("ffffffff4400", "hex");
    expect(new SplitAssembler().push(single)).toBe(single);
  });

  it("rejects datagrams without a valid header", () => {
    const a = new SplitAssembler();
    expect(codeOf(() => a.push(Buffer.from("ff", "hex")))).toBe("TRUNCATED");
    expect(codeOf(() => a.push(Buffer.from("01020304", "hex")))).toBe("MALFORMED");
    expect(codeOf(() => a.push(Buffer.from("feffffff0100", "hex")))).toBe("TRUNCATED");
  });

  it("a missing fragment never completes; decodeDatagrams reports TRUNCATED", () => {
    const fragments = splitResponse(rules, { format: "source", id: 3 });
    expect(codeOf(() => decodeDatagrams([fragments[0]!, fragments[1]!, fragments[3]!]))).toBe(
      "TRUNCATED",
    );
  });

  it("caps the fragment count (SPLIT_LIMIT)", () => {
    const fragments = splitResponse(rules, { format: "source", id: 3, maxPacketBytes: 100 });
    const a = new SplitAssembler({ maxSourceFragments: 10 });
    expect(codeOf(() => fragments.forEach((f) => a.push(f)))).toBe("SPLIT_LIMIT");
  });

  it("checks the CRC32 and the declared decompressed size, and caps it", () => {
    const fragments = splitResponse(rules, {
      format: "source",
      id: 4,
      compress: true,
      maxPacketBytes: 60,
    });
    const badCrc = fragments.map((f, i) =>
      i === 0 ? Buffer.concat([f.subarray(0, 16), Buffer.from([f[16]! ^ 1]), f.subarray(17)]) : f,
    );
    expect(codeOf(() => decodeDatagrams(badCrc))).toBe("CHECKSUM");
    const badSize = fragments.map((f, i) =>
      i === 0 ? Buffer.concat([f.subarray(0, 12), Buffer.from([f[12]! + 1]), f.subarray(13)]) : f,
    );
    expect(codeOf(() => decodeDatagrams(badSize))).toBe("DECOMPRESSION");
    expect(codeOf(() => decodeDatagrams(fragments, {}, { maxDecompressedBytes: 1000 }))).toBe(
      "DECOMPRESSION",
    );
    expect(decodeDatagrams(fragments).kind).toBe("rules");
  });

  it("rejects a fragment whose total disagrees with fragment 0", () => {
    const fragments = splitResponse(rules, { format: "source", id: 5 });
    const liar = Buffer.from(fragments[1]!);
    liar[8] = 9;
    const a = new SplitAssembler();
    a.push(liar);
    expect(codeOf(() => a.push(fragments[0]!))).toBe("MALFORMED");
  });

  it("holds a bounded number of half-assembled ids, dropping the oldest", () => {
    const a = new SplitAssembler({ maxPendingIds: 2 });
    const first = splitResponse(rules, { format: "source", id: 10 });
    a.push(first[0]!);
    a.push(splitResponse(rules, { format: "source", id: 11 })[0]!);
    a.push(splitResponse(rules, { format: "source", id: 12 })[0]!);
    expect(a.pendingCount).toBe(2);
    // id 10 was dropped: its remaining fragments alone cannot complete it.
    expect(first.slice(1).map((f) => a.push(f))).toEqual(first.slice(1).map(() => null));
  });

  it("drops late duplicates of a completed response instead of starting it again", () => {
    const fragments = splitResponse(rules, { format: "goldsrc", id: 6 });
    const a = new SplitAssembler();
    expect(fragments.map((f) => a.push(f)).at(-1)).toEqual(rules);
    expect(a.push(fragments[0]!)).toBeNull();
    expect(a.pendingCount).toBe(0);
  });
});
