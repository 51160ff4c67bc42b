import { queryServer, UdpTransport } from "../../src/protocol";
import { playersOf, rulesOf } from "../../src/simulator/content";
import { startFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { CALM_MIX } from "../helpers/sim";

describe("a fleet of 2,000 simulated servers queried at once over one transport", () => {
  it("answers every server correctly", async () => {
    const specs = makeFleet({
      count: 2000,
      seed: 9,
      basePort: 0,
      mix: {
        ...CALM_MIX,
        challengeAll: 0.4,
        challengePlayersRules: 0.4,
        bigRules: 0.1,
        compressed: 0.3,
        reordering: 0.1,
      },
    });
    const fleet = await startFleet(specs);
    const transport = new UdpTransport();
    try {
      // 250 in flight at a time: the fleet shares this process (and a loaded 2-core machine) with the client.
      const results: Awaited<ReturnType<typeof queryServer>>[] = [];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < fleet.specs.length) {
          const i = next++;
          const s = fleet.specs[i]!;
          results[i] = await queryServer(
            { host: s.host, port: s.queryPort },
            { transport, timeoutMs: 5000, retries: 3 },
          );
        }
      };
      await Promise.all(Array.from({ length: 250 }, worker));
      const wrong = results.flatMap((r, i) => {
        const spec = fleet.specs[i]!;
        const ok =
          Object.keys(r.errors).length === 0 &&
          r.info?.info.name === spec.state.name &&
          r.players?.players.length === playersOf(spec).length &&
          JSON.stringify(r.rules?.rules) === JSON.stringify(rulesOf(spec));
        return ok ? [] : [{ i, errors: r.errors }];
      });
      expect(wrong).toEqual([]);
    } finally {
      await transport.close();
      await fleet.stop();
    }
  }, 60_000);
});
