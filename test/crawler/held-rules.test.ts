/** Rules packed while a query batch holds its answers (src/crawler/store/held-rules.ts). */
import { holdAnswer, PackedRules } from "../../src/crawler/store/held-rules";
import { rulesDigestOf } from "../../src/crawler/store/rules-digest";
import { makeStatus } from "../helpers/status";

const rules = [
  { name: "mp_timelimit", value: "30" },
  { name: "sv_tags", value: "" },
  { name: "", value: "no name" },
  { name: "hostname", value: "Ünïcödé 🎮 server" },
];

describe("PackedRules", () => {
  it("gives back the rules in wire order, empty names and values and duplicates kept", () => {
    const withDuplicate = [...rules, rules[0]!];
    const packed = PackedRules.of(withDuplicate);
    expect(packed.count).toBe(5);
    expect(packed.list()).toEqual(withDuplicate);
    expect(PackedRules.of([]).list()).toEqual([]);
  });

  it("holds each name and value followed by a NUL in one string, and the count: no decoded string", () => {
    const reply = "mp_timelimit\u000030\u0000sv_gravity\u0000800\u0000".repeat(50);
    const [n, v] = reply.split("\u0000");
    const packed = PackedRules.of([{ name: n!, value: v! }]);
    expect(packed.text).toBe("mp_timelimit\u000030\u0000");
    expect(Object.values(packed)).toEqual(["mp_timelimit\u000030\u0000", 1]);
  });

  it("cleans names and values as the write would, so a NUL inside one cannot shift the pairs", () => {
    const packed = PackedRules.of([
      { name: "a\u0000b", value: "c\u0000" },
      { name: "lone \ud800 surrogate", value: "d" },
    ]);
    expect(packed.list()).toEqual([
      { name: "ab", value: "c" },
      { name: "lone \ufffd surrogate", value: "d" },
    ]);
  });

  it("has the digest of the same rules decoded: a row written from either keeps its rules for the other", () => {
    for (const raw of [null, { g_gametype: "4" }]) {
      expect(rulesDigestOf({ rules: PackedRules.of(rules), raw })).toBe(
        rulesDigestOf({ rules, raw }),
      );
    }
    const changed = rules.map((r, i) => (i === 1 ? { ...r, value: "x" } : r));
    expect(rulesDigestOf({ rules: PackedRules.of(changed), raw: null })).not.toBe(
      rulesDigestOf({ rules, raw: null }),
    );
    // Where one string ends still counts, packed as decoded.
    expect(
      rulesDigestOf({ rules: PackedRules.of([{ name: "ab", value: "c" }]), raw: null }),
    ).not.toBe(rulesDigestOf({ rules: PackedRules.of([{ name: "a", value: "bc" }]), raw: null }));
  });
});

describe("holdAnswer", () => {
  it("packs the rules and leaves the answer it was given as it was", () => {
    const status = makeStatus({ name: "held", rules });
    const held = holdAnswer(status);
    expect(held.rules).toBeInstanceOf(PackedRules);
    expect((held.rules as PackedRules).list()).toEqual(rules);
    expect(status.rules).toEqual(rules);
    expect({ ...held, rules: status.rules }).toEqual(status);
  });

  it("returns an answer without rules as it is", () => {
    const status = makeStatus({ name: "bare", rules: [] });
    expect(holdAnswer(status)).toBe(status);
  });
});
