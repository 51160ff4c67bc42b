import {
  limitInFlight,
  type Querier,
  type QueryOutcome,
  type QueryTarget,
} from "../../src/crawler/querier";

const target = (serverId: number): QueryTarget => ({
  serverId,
  host: "127.0.0.1",
  queryPort: 27015,
  protocol: "source",
});

describe("limitInFlight", () => {
  it("never lets more than the cap run at once across callers, and runs every query", async () => {
    let running = 0;
    let peak = 0;
    const inner: Querier = {
      async query(t) {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, (t.serverId % 5) + 1));
        running -= 1;
        return { kind: "failed", code: `done-${t.serverId}` };
      },
    };
    const limited = limitInFlight(inner, 7);
    const signal = new AbortController().signal;
    // Two "batches" sharing the one limiter, as two batch jobs of a worker process do.
    const batch = (from: number): Promise<QueryOutcome[]> =>
      Promise.all(Array.from({ length: 50 }, (_v, i) => limited.query(target(from + i), signal)));
    const [a, b] = await Promise.all([batch(0), batch(100)]);
    expect(peak).toBe(7);
    expect(running).toBe(0);
    expect(a.map((o) => (o.kind === "failed" ? o.code : ""))).toEqual(
      Array.from({ length: 50 }, (_v, i) => `done-${i}`),
    );
    expect(b).toHaveLength(50);
  });

  it("frees a slot when a query throws", async () => {
    let calls = 0;
    const inner: Querier = {
      query() {
        calls += 1;
        return calls === 1
          ? Promise.reject(new Error("our side failed"))
          : Promise.resolve({ kind: "failed", code: "TIMEOUT" });
      },
    };
    const limited = limitInFlight(inner, 1);
    const signal = new AbortController().signal;
    await expect(limited.query(target(1), signal)).rejects.toThrow("our side failed");
    await expect(limited.query(target(2), signal)).resolves.toEqual({
      kind: "failed",
      code: "TIMEOUT",
    });
  });
});
