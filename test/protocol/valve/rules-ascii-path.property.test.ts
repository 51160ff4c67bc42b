/**
 * A2S_RULES has two read paths: an all-ASCII reply is split at its NULs in one go, anything else is
 * read pair by pair. Both must give the same rules and the same truncation verdict for any bytes
 * after the count, complete or cut anywhere (fast-check, fixed seed so failures replay).
 */
import fc from "fast-check";
import { decodeRulesResponse, type Rule, type RulesResult } from "../../../src/protocol";
import { PacketReader } from "../../../src/protocol/wire/packet-reader";

const params = { seed: 20261128, numRuns: 1000 };

/** The pair-by-pair reading, written out here as the reference the fast path must match. */
function rulesPairByPair(payload: Buffer): RulesResult {
  const reader = new PacketReader(payload, 5);
  const count = reader.u16le();
  const rules: Rule[] = [];
  let truncated = false;
  while (!reader.atEnd) {
    const start = reader.offset;
    const rest = payload.subarray(start);
    const nul1 = rest.indexOf(0);
    const nul2 = nul1 < 0 ? -1 : rest.indexOf(0, nul1 + 1);
    if (nul2 < 0) {
      truncated = true;
      break;
    }
    const name = reader.cstringExact();
    const value = reader.cstringExact();
    const rule: Rule = { name: name.value, value: value.value };
    if (name.hex !== undefined) rule.nameHex = name.hex;
    if (value.hex !== undefined) rule.valueHex = value.hex;
    rules.push(rule);
  }
  if (rules.length < count) truncated = true;
  return truncated ? { count, rules, truncated: true } : { count, rules };
}

/** Bytes where NULs are frequent, mostly ASCII, sometimes a byte >= 0x80 (the other path). */
const body = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(0) },
    { weight: 12, arbitrary: fc.integer({ min: 1, max: 0x7f }) },
    { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
  ),
  { maxLength: 80 },
);

describe("A2S_RULES: the all-ASCII path reads what pair-by-pair reading reads", () => {
  it("for any body after any count", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), body, (count, bytes) => {
        const payload = Buffer.concat([
          Buffer.from([0xff, 0xff, 0xff, 0xff, 0x45, count & 0xff, count >> 8]),
          Buffer.from(bytes),
        ]);
        expect(decodeRulesResponse(payload)).toEqual(rulesPairByPair(payload));
      }),
      params,
    );
  });

  it("keeps empty names and values, and calls a lone string after the last pair truncated", () => {
    const payload = Buffer.from("ffffffff450200000061003100620032", "hex");
    expect(decodeRulesResponse(payload)).toEqual({
      count: 2,
      rules: [
        { name: "", value: "" },
        { name: "a", value: "1" },
      ],
      truncated: true,
    });
  });
});
