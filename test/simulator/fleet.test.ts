import { playersOf } from "../../src/simulator/content";
import { fleetLayout, layoutSpecs, sliceRange } from "../../src/simulator/fleet-processes";
import { makeFleet, makeServerSpec, SIM_REGIONS } from "../../src/simulator/make-fleet";

describe("makeFleet", () => {
  it("is deterministic from the seed and differs between seeds", () => {
    const a = makeFleet({ count: 200, seed: 5 });
    expect(makeFleet({ count: 200, seed: 5 })).toEqual(a);
    expect(makeFleet({ count: 200, seed: 6 })).not.toEqual(a);
    expect(makeServerSpec({ count: 200, seed: 5 }, 77)).toEqual(a[77]);
    expect(playersOf(a[3]!)).toEqual(playersOf(makeFleet({ count: 200, seed: 5 })[3]!));
  });

  it("spreads servers over hosts, ports, games and every region", () => {
    const fleet = makeFleet({
      count: 3000,
      seed: 1,
      hosts: ["127.0.0.1", "127.0.0.2", "127.0.0.3"],
      basePort: 20000,
    });
    expect(new Set(fleet.map((s) => s.host))).toEqual(
      new Set(["127.0.0.1", "127.0.0.2", "127.0.0.3"]),
    );
    expect(new Set(fleet.map((s) => `${s.host}:${s.queryPort}`)).size).toBe(3000);
    expect(Math.max(...fleet.map((s) => s.queryPort))).toBe(20999);
    expect(new Set(fleet.map((s) => s.region))).toEqual(new Set(SIM_REGIONS));
    expect(new Set(fleet.map((s) => s.state.folder)).size).toBeGreaterThanOrEqual(8);
    expect(
      fleet.some((s) => s.state.appId === 730) && fleet.some((s) => s.state.appId === 252490),
    ).toBe(true);
    expect(
      fleet.some((s) => s.behaviour?.challenge === "all") &&
        fleet.some((s) => s.behaviour?.compress),
    ).toBe(true);
  });

  it("splits a multi-process layout into slices that cover the fleet once", () => {
    const layout = fleetLayout({ count: 25, processes: 3, seed: 2 });
    expect(layout.hosts).toEqual(["127.0.0.1", "127.0.0.2", "127.0.0.3"]);
    const ranges = [0, 1, 2].map((k) => sliceRange(layout, k));
    expect(ranges).toEqual([
      { start: 0, end: 9 },
      { start: 9, end: 18 },
      { start: 18, end: 25 },
    ]);
    const specs = layoutSpecs(layout);
    expect(specs.slice(9, 18).every((s) => s.host === "127.0.0.2")).toBe(true);
  });
});
