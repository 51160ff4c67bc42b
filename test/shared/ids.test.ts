import { IdRangeError, toId } from "../../src/shared/ids";

describe("toId", () => {
  it("reads bigint and number ids as numbers", () => {
    expect(toId(42n)).toBe(42);
    expect(toId(3_000_000_001n)).toBe(3_000_000_001);
    expect(toId(7)).toBe(7);
    expect(toId(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("refuses an id a number cannot hold exactly, with a stable code", () => {
    expect(() => toId(2n ** 53n)).toThrow(IdRangeError);
    expect(() => toId(2n ** 53n)).toThrow(expect.objectContaining({ code: "ID_OUT_OF_RANGE" }));
  });
});
