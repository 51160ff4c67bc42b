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
});
