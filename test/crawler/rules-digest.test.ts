/** The fingerprint of an answer's rules and raw values (src/crawler/store/rules-digest.ts). */
import { rulesDigestOf } from "../../src/crawler/store/rules-digest";

const rules = [
  { name: "mp_timelimit", value: "30" },
  { name: "sv_gravity", value: "800" },
];
const of = (r: { name: string; value: string }[], raw: Record<string, string> | null = null) =>
  rulesDigestOf({ rules: r, raw });

describe("rulesDigestOf", () => {
  it("is the same for the same rules and raw values, as a signed 64-bit integer", () => {
    const digest = of(rules, { g_gametype: "4" });
    expect(
      of(
        rules.map((r) => ({ ...r })),
        { g_gametype: "4" },
      ),
    ).toBe(digest);
    const value = BigInt(digest);
    expect(value).toBeGreaterThanOrEqual(-(2n ** 63n));
    expect(value).toBeLessThan(2n ** 63n);
  });

  it("changes with any name, value, order or raw value", () => {
    const digests = [
      of(rules),
      of([rules[0]!, { name: "sv_gravity", value: "801" }]),
      of([rules[0]!, { name: "sv_Gravity", value: "800" }]),
      of([rules[1]!, rules[0]!]),
      of(rules.slice(0, 1)),
      of(rules, {}),
      of(rules, { g_gametype: "4" }),
      of(rules, { g_gametype: "5" }),
      of([], {}),
      of([]),
    ];
    expect(new Set(digests).size).toBe(digests.length);
  });

  it("tells where one string ends and the next begins", () => {
    expect(of([{ name: "ab", value: "c" }])).not.toBe(of([{ name: "a", value: "bc" }]));
    expect(
      of([
        { name: "a", value: "b" },
        { name: "c", value: "" },
      ]),
    ).not.toBe(of([{ name: "a", value: "bc" }]));
    const pair = [{ name: "x", value: "y" }];
    expect(of(pair, { k: "v" })).not.toBe(of([...pair, { name: "k", value: "v" }], {}));
    expect(of(pair, {})).not.toBe(of(pair));
  });

  it("is the digest of what the write stores: rules that clean to the same text have the same one", () => {
    // The write strips NULs (sanitize.ts cleanText): both of these are stored as { name: "a", value: "b" }.
    expect(of([{ name: "a\u0000", value: "b" }])).toBe(of([{ name: "a", value: "\u0000b" }]));
    expect(of([{ name: "a", value: "b" }], { "k\u0000": "v" })).toBe(
      of([{ name: "a", value: "b" }], { k: "v" }),
    );
  });
});
