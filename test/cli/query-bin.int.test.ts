import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { rulesOf } from "../../src/simulator/content";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { simSpec } from "../helpers/sim";

const root = path.resolve(__dirname, "..", "..");
const built = existsSync(path.join(root, "dist", "cli", "main.js"));

(built ? describe : describe.skip)("the gsindex binary (bin/gsindex.js, built)", () => {
  let fleet: RunningFleet;
  beforeAll(async () => {
    fleet = await startFleet([
      simSpec(
        { challenge: "all", compress: true },
        { index: 40, bigRules: true, state: { players: 40, maxPlayers: 64, bots: 0 } },
      ),
    ]);
  });
  afterAll(() => fleet.stop());

  it("queries a split, bzip2-compressed, challenge-protected server", async () => {
    const spec = fleet.specs[0] as SimServerSpec;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        path.join(root, "bin", "gsindex.js"),
        "query",
        `${spec.host}:${spec.queryPort}`,
        "--json",
        "--timeout",
        "2000",
      ],
      { cwd: root },
    );
    const json = JSON.parse(stdout) as {
      info: { name: string };
      players: unknown[];
      rules: unknown[];
      pingMs: number;
    };
    expect(json.info.name).toBe(spec.state.name);
    expect(json.players).toHaveLength(40);
    expect(json.rules).toEqual(rulesOf(spec));
  }, 20_000);
});
