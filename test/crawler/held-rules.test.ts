/** Rules packed while a query batch holds its answers (src/crawler/store/held-rules.ts). */
import { answerRowJson, encodeAnswer } from "../../src/crawler/store/answer-row";
import { PackedRules } from "../../src/crawler/store/held-rules";
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

describe("encodeAnswer", () => {
  it("packs the rules, leaves the answer it was given as it was, and holds its row as one string", () => {
    const status = makeStatus({ name: "held", rules });
    const copy = structuredClone(status);
    const encoded = encodeAnswer({ id: 7, status, pingMs: 12 });
    expect(encoded.rules).toBeInstanceOf(PackedRules);
    expect((encoded.rules as PackedRules).list()).toEqual(rules);
    expect(status).toEqual(copy);
    expect(typeof encoded.head).toBe("string");
    expect(encoded.digest).toBe(rulesDigestOf({ rules, raw: null }));
    expect(encoded.sample).toMatchObject({ id: 7, online: true, ping_ms: 12 });
  });

  it("writes the rules as decoded, or leaves them out when the stored digest is theirs", () => {
    const status = makeStatus({ name: "row", rules, raw: { g_gametype: "4" } });
    const encoded = encodeAnswer({ id: 7, status, pingMs: 12 });
    const written = JSON.parse(answerRowJson(encoded, "1")) as unknown[];
    expect(written.slice(-3)).toEqual([rules, { g_gametype: "4" }, false]);
    expect(written[0]).toBe(7);
    const kept = JSON.parse(answerRowJson(encoded, encoded.digest)) as unknown[];
    expect(kept.slice(-3)).toEqual([null, null, true]);
    expect(kept.slice(0, -3)).toEqual(written.slice(0, -3));
  });
});
