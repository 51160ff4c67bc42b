import fc from "fast-check";
import { decodeCursor, encodeCursor } from "../../src/graphql/common/cursor";
import { BadUserInputError } from "../../src/graphql/errors";

describe("keyset cursors", () => {
  it("round-trip any sort key and id, and are opaque URL-safe text", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer(),
          fc.string(),
          fc.constant(null),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
        ),
        fc.nat(),
        (value, id) => {
          const c = encodeCursor({ order: "name:ASC", value, id });
          expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(decodeCursor(c, "name:ASC", "after")).toEqual({
            order: "name:ASC",
            value: Object.is(value, -0) ? 0 : value,
            id,
          });
        },
      ),
    );
  });

  it("are stable: the same row gives the same cursor", () => {
    expect(encodeCursor({ order: "players:DESC", value: 12, id: 7 })).toBe(
      encodeCursor({ order: "players:DESC", value: 12, id: 7 }),
    );
  });

  const bad =
    (c: string, order = "players:DESC") =>
    () =>
      decodeCursor(c, order, "before");
  it.each([
    ["empty", ""],
    ["not base64url", "a+b/c="],
    ["not JSON", Buffer.from("nope").toString("base64url")],
    ["wrong shape", Buffer.from('{"a":1}').toString("base64url")],
    ["negative id", Buffer.from('["players:DESC",1,-3]').toString("base64url")],
    ["fractional id", Buffer.from('["players:DESC",1,1.5]').toString("base64url")],
    ["object sort key", Buffer.from('["players:DESC",{},1]').toString("base64url")],
    ["too long", "a".repeat(2000)],
  ])("refuses a cursor that is %s, naming the argument", (_name, c) => {
    expect(bad(c)).toThrow(BadUserInputError);
    try {
      bad(c)();
    } catch (err) {
      expect((err as BadUserInputError).extensions).toMatchObject({
        code: "BAD_USER_INPUT",
        argumentName: "before",
      });
    }
  });

  it("refuses a cursor made for another ordering", () => {
    const c = encodeCursor({ order: "name:ASC", value: "x", id: 1 });
    expect(() => decodeCursor(c, "name:DESC", "after")).toThrow(/made for ordering name:ASC/);
  });
});
