import { waitFor } from "./wait-for";

describe("waitFor", () => {
  it("returns the first value that is not null, undefined or false, 0 included", async () => {
    const values = [null, undefined, false, 0];
    expect(
      await waitFor("a value", () => values.shift(), { timeoutMs: 10_000, intervalMs: 1 }),
    ).toBe(0);
  });

  it("fails naming what it waited for, with the extra context, when the time runs out", async () => {
    await expect(
      waitFor("the thing that never happens", () => false, {
        timeoutMs: 20,
        intervalMs: 5,
        describe: () => "last log line",
      }),
    ).rejects.toThrow(
      /^timed out after 20 ms waiting for the thing that never happens\nlast log line$/,
    );
  });

  it("fails at once on a probe error, unless told to retry; then the last error is in the message", async () => {
    const boom = () => {
      throw new Error("connection refused");
    };
    await expect(waitFor("a service", boom, { timeoutMs: 10_000 })).rejects.toThrow(
      "connection refused",
    );
    await expect(
      waitFor("a service", boom, { timeoutMs: 20, intervalMs: 5, retryErrors: true }),
    ).rejects.toThrow(/waiting for a service\nlast error: connection refused/);
    let calls = 0;
    expect(
      await waitFor("a service", () => (++calls < 3 ? boom() : "up"), {
        timeoutMs: 10_000,
        intervalMs: 1,
        retryErrors: true,
      }),
    ).toBe("up");
  });
});
