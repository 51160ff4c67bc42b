import { existsSync } from "node:fs";
import path from "node:path";
import { queryServer, UdpTransport } from "../../src/protocol";
import { fleetLayout, startFleetProcesses } from "../../src/simulator/fleet-processes";
import { CALM_MIX } from "../helpers/sim";

// Children run the built CLI (npm run build); scripts/test.sh builds before the tests.
const built = existsSync(path.resolve(__dirname, "..", "..", "dist", "cli", "main.js"));
const describeBuilt = built ? describe : describe.skip;

describeBuilt("a fleet over two child processes (127.0.0.1 and 127.0.0.2)", () => {
  it("serves every slice and stops its children", async () => {
    // A fixed base port is required across processes; pick one per run below the ephemeral range.
    const basePort = 22000 + (process.pid % 8000);
    const layout = fleetLayout({ count: 30, processes: 2, seed: 4, basePort, mix: CALM_MIX });
    const fleet = await startFleetProcesses(layout);
    const transport = new UdpTransport();
    try {
      expect(new Set(fleet.specs.map((s) => s.host))).toEqual(new Set(["127.0.0.1", "127.0.0.2"]));
      const results = await Promise.all(
        fleet.specs.map((s) =>
          queryServer({ host: s.host, port: s.queryPort }, { transport, timeoutMs: 2000 }),
        ),
      );
      expect(results.map((r) => r.info?.info.name)).toEqual(fleet.specs.map((s) => s.state.name));
    } finally {
      await transport.close();
      await fleet.stop();
    }
    const after = await queryServer(
      { host: "127.0.0.2", port: basePort },
      { timeoutMs: 100, retries: 0 },
    );
    expect(after.info).toBeNull();
  }, 30_000);

  it("passes --player-clock to its children: their players' connection times run on", async () => {
    const basePort = 30000 - 1 - (process.pid % 1000);
    const layout = fleetLayout({
      count: 8,
      processes: 1,
      seed: 4,
      basePort,
      mix: CALM_MIX,
      playerClock: true,
    });
    const fleet = await startFleetProcesses(layout);
    const transport = new UdpTransport();
    try {
      const populated = fleet.specs.find((s) => s.state.players > 0);
      if (populated === undefined) throw new Error("seed 4 should give a populated server");
      const durations = async (): Promise<number[]> => {
        const r = await queryServer(
          { host: populated.host, port: populated.queryPort },
          { transport, timeoutMs: 2000 },
        );
        return (r.players?.players ?? []).map((p) => p.duration);
      };
      const first = await durations();
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const second = await durations();
      expect(second).toHaveLength(first.length);
      expect(first.length).toBeGreaterThan(0);
      const grown = second.map((d, i) => d - (first[i] as number));
      expect(new Set(grown).size).toBe(1);
      expect(grown[0]).toBeGreaterThanOrEqual(2);
    } finally {
      await transport.close();
      await fleet.stop();
    }
  }, 30_000);
});
