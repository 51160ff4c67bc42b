/**
 * Many queries under one long-lived signal (a crawler's batch or shutdown signal): the signal carries
 * at most one 'abort' listener however many queries are in flight, none once they have settled, and
 * Node never warns about a listener leak. Aborting it still aborts every query in flight.
 */
import { getEventListeners } from "node:events";
import {
  linkAbort,
  UdpTransport,
  protocolAdapter,
  type QueryableProtocolId,
} from "../../src/protocol";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { simSpec } from "../helpers/sim";

const QUERIES_PER_SERVER = 15;
const abortListeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

describe("linkAbort", () => {
  it("fans one listener out to every link and drops it with the last unlink", () => {
    const controller = new AbortController();
    const calls: number[] = [];
    const unlinks = [1, 2, 3].map((n) => linkAbort(controller.signal, () => calls.push(n)));
    expect(abortListeners(controller.signal)).toBe(1);
    unlinks[1]!();
    unlinks[1]!(); // twice is harmless
    expect(abortListeners(controller.signal)).toBe(1);
    controller.abort();
    expect(calls).toEqual([1, 3]);
    expect(abortListeners(controller.signal)).toBe(0);
    unlinks[0]!();
    unlinks[2]!();
  });

  it("removes the listener once every link is undone, and links again afterwards", () => {
    const controller = new AbortController();
    const called = jest.fn();
    linkAbort(controller.signal, called)();
    expect(abortListeners(controller.signal)).toBe(0);
    const unlink = linkAbort(controller.signal, called);
    expect(abortListeners(controller.signal)).toBe(1);
    unlink();
    controller.abort();
    expect(called).not.toHaveBeenCalled();
  });

  it("calls at once for a signal already aborted, and does nothing without a signal", () => {
    const called = jest.fn();
    linkAbort(AbortSignal.abort(), called)();
    expect(called).toHaveBeenCalledTimes(1);
    linkAbort(undefined, called)();
    expect(called).toHaveBeenCalledTimes(1);
  });
});

describe("queries sharing one signal", () => {
  const protocols: QueryableProtocolId[] = ["source", "quake3", "gamespy2"];
  let transport: UdpTransport;
  let fleet: RunningFleet;
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => {
    if (warning.name === "MaxListenersExceededWarning") warnings.push(warning);
  };

  beforeAll(async () => {
    process.on("warning", onWarning);
    transport = new UdpTransport({ bindAddress4: "127.0.0.1", bindAddress6: "::1" });
    const answering = protocols.map((protocol, index): SimServerSpec => ({
      ...simSpec({}, { index }),
      protocol,
    }));
    const silent = protocols.map((protocol, index): SimServerSpec => ({
      ...simSpec({ silent: true }, { index: 10 + index }),
      protocol,
    }));
    fleet = await startFleet([...answering, ...silent]);
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await fleet.stop();
    await transport.close();
  });

  function queryAll(signal: AbortSignal): Promise<PromiseSettledResult<unknown>[]> {
    return Promise.allSettled(
      fleet.specs.flatMap((spec) =>
        Array.from({ length: QUERIES_PER_SERVER }, () =>
          protocolAdapter(spec.protocol as QueryableProtocolId).queryStatus(
            { host: spec.host, port: spec.queryPort },
            {
              timeoutMs: spec.behaviour?.silent === true ? 100 : 1000,
              retries: 0,
              transport,
              signal,
            },
          ),
        ),
      ),
    );
  }

  it("leaves the signal with the listeners it had, answered or timed out, and no leak warning", async () => {
    const shared = new AbortController();
    shared.signal.addEventListener("abort", () => undefined); // the owner's own listener stays
    const before = abortListeners(shared.signal);
    const settled = queryAll(shared.signal);
    await new Promise((resolve) => setImmediate(resolve));
    expect(abortListeners(shared.signal)).toBeLessThanOrEqual(before + 1);
    const results = await settled;
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(
      protocols.length * QUERIES_PER_SERVER,
    );
    expect(abortListeners(shared.signal)).toBe(before);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toEqual([]);
  });

  it("aborting the shared signal aborts every query in flight", async () => {
    const shared = new AbortController();
    const settled = queryAll(shared.signal);
    await new Promise((resolve) => setImmediate(resolve));
    shared.abort();
    const results = await settled;
    expect(
      results.every(
        (r) => r.status === "rejected" && (r.reason as { code?: string }).code === "ABORTED",
      ),
    ).toBe(true);
    expect(abortListeners(shared.signal)).toBe(0);
  });
});
