import { cleanJson, cleanText } from "../../src/crawler/store/sanitize";

describe("sanitize", () => {
  it("strips NUL and replaces lone surrogates, in text and deep in JSON (keys too)", () => {
    expect(cleanText("a\u0000b\ud800c")).toBe("ab\ufffdc");
    expect(cleanText("ok \ud83d\ude00")).toBe("ok \ud83d\ude00");
    expect(cleanText(null)).toBeNull();
    expect(
      cleanJson([{ name: "x\u0000", score: 1 }, { "k\udc00": ["\ud800", 2, null, true] }]),
    ).toEqual([{ name: "x", score: 1 }, { "k\ufffd": ["\ufffd", 2, null, true] }]);
  });

  it("returns a value with nothing to clean as it is, without copying it", () => {
    const players = [{ name: "alice \ud83d\ude00", score: 3, durationSeconds: 60 }];
    const rules = [{ name: "sv_gravity", value: "800" }];
    expect(cleanJson(players)).toBe(players);
    expect(cleanJson(rules)).toBe(rules);
    const dirty = [{ name: "bob\u0000", score: 1 }];
    const cleaned = cleanJson(dirty);
    expect(cleaned).not.toBe(dirty);
    expect(dirty[0]!.name).toBe("bob\u0000");
    expect(cleaned).toEqual([{ name: "bob", score: 1 }]);
  });
});
