import { getEventListeners } from "node:events";
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

  describe("whenFree", () => {
    /** An inner querier whose queries end when the test says so. */
    const controlled = () => {
      const ends: Array<() => void> = [];
      const inner: Querier = {
        query: () =>
          new Promise<QueryOutcome>((resolve) =>
            ends.push(() => resolve({ kind: "failed", code: "TIMEOUT" })),
          ),
      };
      return { inner, ends };
    };
    /** A turn of the event loop: whenFree lets one held caller through per turn. */
    const turn = () => new Promise<void>((r) => setImmediate(r));
    const signal = new AbortController().signal;

    it("is free while a slot is, and holds callers while every slot is taken or promised", async () => {
      const { inner, ends } = controlled();
      const limited = limitInFlight(inner, 2);
      await limited.whenFree!(signal);
      const sent = [limited.query(target(1), signal), limited.query(target(2), signal)];
      // Both slots taken, a third query waits for one: no room for another caller.
      const third = limited.query(target(3), signal);
      let through = 0;
      const held = [
        limited.whenFree!(signal).then(() => (through += 1)),
        limited.whenFree!(signal).then(() => (through += 1)),
      ];
      await turn();
      expect(through).toBe(0);
      // The first query ends: its slot goes to the waiting third query, still no room.
      ends.shift()!();
      await sent[0];
      await turn();
      expect(through).toBe(0);
      // The second ends: a slot is free. One caller goes through, and sends a query that takes it.
      ends.shift()!();
      await sent[1];
      await turn();
      expect(through).toBe(1);
      const fourth = limited.query(target(4), signal);
      await turn();
      expect(through).toBe(1);
      // The third and fourth end: the other caller goes through.
      ends.shift()!();
      ends.shift()!();
      await Promise.all([third, fourth]);
      await Promise.all(held);
      expect(through).toBe(2);
    });

    it("lets the next caller through when the one before it sent nothing", async () => {
      const { inner, ends } = controlled();
      const limited = limitInFlight(inner, 1);
      const first = limited.query(target(1), signal);
      let through = 0;
      const held = [1, 2, 3].map(() => limited.whenFree!(signal).then(() => (through += 1)));
      ends.shift()!();
      await first;
      // Nobody sends a query after going through (a batch with nothing to query): all go in turn.
      await Promise.all(held);
      expect(through).toBe(3);
    });

    it("holds a caller arriving in the same turn as one it let through at once, until that one has sent", async () => {
      const { inner, ends } = controlled();
      const limited = limitInFlight(inner, 2);
      let through = 0;
      // Two batch jobs starting together, each sending 2 queries once through: the slots fit one of them.
      const batch = async (first: number): Promise<void> => {
        await limited.whenFree!(signal);
        through += 1;
        await Promise.all([
          limited.query(target(first), signal),
          limited.query(target(first + 1), signal),
        ]);
      };
      const both = [batch(1), batch(3)];
      await turn();
      await turn();
      expect(through).toBe(1);
      // The first batch's queries end: the slots are free again, and the second goes through.
      ends.shift()!();
      ends.shift()!();
      await both[0];
      await turn();
      await turn();
      expect(through).toBe(2);
      ends.shift()!();
      ends.shift()!();
      await Promise.all(both);
    });

    it("lets held callers go at once when the worker's stop aborts `stopping`", async () => {
      const { inner, ends } = controlled();
      const limited = limitInFlight(inner, 1);
      const first = limited.query(target(1), signal);
      const stopping = new AbortController();
      let through = 0;
      const held = [1, 2].map(() =>
        limited.whenFree!(signal, stopping.signal).then(() => (through += 1)),
      );
      await turn();
      expect(through).toBe(0);
      stopping.abort();
      await Promise.all(held);
      expect(through).toBe(2);
      // Once stopping, nobody is held.
      await limited.whenFree!(signal, stopping.signal);
      ends.shift()!();
      await first;
    });

    it("holds 40 callers on one stop signal with one listener on it, gone when they are through", async () => {
      // A worker holds up to WORKER_CONCURRENCY - 1 batch jobs (31 by default) on its one stop signal: a
      // listener each tripped Node's MaxListenersExceededWarning at 11, which an operator's log reads as a leak.
      const { inner, ends } = controlled();
      const limited = limitInFlight(inner, 1);
      const first = limited.query(target(1), signal);
      const stopping = new AbortController();
      const held = Array.from({ length: 40 }, () => limited.whenFree!(signal, stopping.signal));
      await turn();
      expect(getEventListeners(stopping.signal, "abort").length).toBeLessThanOrEqual(1);
      expect(getEventListeners(signal, "abort").length).toBeLessThanOrEqual(1);
      ends.shift()!();
      await first;
      await Promise.all(held);
      expect(getEventListeners(stopping.signal, "abort")).toEqual([]);
      expect(getEventListeners(signal, "abort")).toEqual([]);
    });

    it("lets a held caller go when its signal aborts, and forgets it", async () => {
      const { inner, ends } = controlled();
      const limited = limitInFlight(inner, 1);
      const first = limited.query(target(1), signal);
      const stop = new AbortController();
      let aborted = false;
      const gone = limited.whenFree!(stop.signal).then(() => (aborted = true));
      let through = false;
      const next = limited.whenFree!(signal).then(() => (through = true));
      stop.abort();
      await gone;
      expect(aborted).toBe(true);
      await turn();
      expect(through).toBe(false);
      ends.shift()!();
      await first;
      await next;
      expect(through).toBe(true);
    });
  });
});
