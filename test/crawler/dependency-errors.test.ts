import { isDependencyDown } from "../../src/crawler/dependency-errors";

describe("isDependencyDown", () => {
  it("knows connection failures of PostgreSQL and Redis, however they are wrapped", () => {
    expect(
      isDependencyDown(
        Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      ),
    ).toBe(true);
    expect(
      isDependencyDown(
        Object.assign(new Error("terminating connection due to administrator command"), {
          code: "57P01",
        }),
      ),
    ).toBe(true);
    expect(isDependencyDown(Object.assign(new Error("x"), { code: "08006" }))).toBe(true);
    expect(
      isDependencyDown(
        Object.assign(new Error("Raw query failed"), { code: "P2010", meta: { code: "57P03" } }),
      ),
    ).toBe(true);
    expect(
      isDependencyDown(
        new Error("outer", { cause: new Error("Connection terminated unexpectedly") }),
      ),
    ).toBe(true);
    expect(
      isDependencyDown(
        new AggregateError([new Error("connect ECONNREFUSED ::1:6379")], "all failed"),
      ),
    ).toBe(true);
    expect(isDependencyDown(new Error("Connection is closed."))).toBe(true);
  });

  it("leaves errors of our own work to the usual retries", () => {
    expect(
      isDependencyDown(
        Object.assign(new Error("Raw query failed. Code: `40P01`. Message: `deadlock detected`"), {
          code: "P2010",
          meta: { code: "40P01" },
        }),
      ),
    ).toBe(false);
    expect(isDependencyDown(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(
      false,
    );
    expect(isDependencyDown(new TypeError("undefined is not a function"))).toBe(false);
    expect(isDependencyDown("ECONNREFUSED")).toBe(false);
    expect(isDependencyDown(null)).toBe(false);
  });
});
