import { QUERYABLE_PROTOCOL_IDS } from "../../src/protocol";
import { makeFleet } from "../../src/simulator/make-fleet";
import { CALM_MIX } from "../helpers/sim";

describe("fleets mixing older protocols", () => {
  it("leaves a fleet without legacyProtocols exactly as it was", () => {
    const base = makeFleet({ count: 50, seed: 7 });
    expect(makeFleet({ count: 50, seed: 7, mix: { legacyProtocols: 0 } })).toEqual(base);
    expect(base.every((s) => s.protocol === undefined)).toBe(true);
  });

  it("draws older protocols from their own stream, everything else unchanged", () => {
    const base = makeFleet({ count: 200, seed: 7, mix: CALM_MIX });
    const mixed = makeFleet({ count: 200, seed: 7, mix: { ...CALM_MIX, legacyProtocols: 0.5 } });
    const legacy = mixed.filter((s) => s.protocol !== undefined);
    expect(legacy.length).toBeGreaterThan(50);
    // Every older protocol of the registry (the eight of today: Quake 2/3, GameSpy v1/v2/v3, Doom 3, Half-Life, ASE).
    expect(new Set(legacy.map((s) => s.protocol)).size).toBe(
      QUERYABLE_PROTOCOL_IDS.filter((id) => id !== "source").length,
    );
    mixed.forEach((s, i) =>
      expect({ ...s, protocol: undefined, state: { ...s.state, gamePort: 0 } }).toEqual({
        ...base[i],
        protocol: undefined,
        state: { ...base[i]!.state, gamePort: 0 },
      }),
    );
    const ase = legacy.find((s) => s.protocol === "ase")!;
    expect(ase.state.gamePort).toBe(ase.queryPort - 123);
  });
});
