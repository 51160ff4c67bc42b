/**
 * Issue 3's bar: against the simulated master with 20,000 servers and its rate limit on (30 packets per
 * 1 s window, then 1 s of silence: the real one's shape, compressed in time), `gsindex master` lists every
 * server exactly once for region all, and exactly the right subset for filters with \nor\.
 */
import { runMaster } from "../../src/cli/commands/master";
import { parseMasterFilter, MASTER_REGIONS } from "../../src/protocol";
import { type SimValveMaster, startSimValveMaster } from "../../src/simulator/master";
import { applyMasterFilter } from "../../src/simulator/master-filter-match";
import { makeListTestFleet } from "../helpers/master-fleet";

const fleet = makeListTestFleet(20_000);
const idsOf = (specs: typeof fleet): string[] =>
  specs.map((s) => `${s.host}:${s.queryPort}`).sort();

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runMaster(
    argv,
    { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } },
    {},
  );
  return { code, out, err };
}

describe("gsindex master against a rate-limited simulated master of 20,000 servers", () => {
  let master: SimValveMaster;
  beforeAll(async () => {
    master = await startSimValveMaster({
      fleet,
      rateLimit: { packetsPerWindow: 30, windowMs: 1000, silenceMs: 1000 },
    });
  });
  afterAll(async () => master.close());
  const host = (): string => `${master.address.host}:${master.address.port}`;

  it("lists every server exactly once for region all, riding out the silences", async () => {
    const before = master.stats.rateLimited;
    const { code, out, err } = await cli([
      "--host",
      host(),
      "--region",
      "all",
      "--json",
      "--rate",
      "0",
      "--timeout",
      "250",
      "--retries",
      "12",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const json = JSON.parse(out) as {
      servers: string[];
      complete: boolean;
      resumeFrom: string | null;
    };
    expect(json.complete).toBe(true);
    expect(json.resumeFrom).toBeNull();
    expect(json.servers).toHaveLength(20_000);
    expect(new Set(json.servers).size).toBe(20_000);
    expect([...json.servers].sort()).toEqual(idsOf(fleet));
    expect(master.stats.rateLimited).toBeGreaterThan(before); // the limit really bit
  }, 60_000);

  it("lists exactly the servers a \\nor\\ filter selects, in all regions and in one, as plain lines", async () => {
    const filter = "\\gamedir\\cstrike\\nor\\2\\map\\de_dust2\\and\\2\\linux\\1\\empty\\1";
    const nodes = parseMasterFilter(filter);
    const all = await cli([
      "--host",
      host(),
      "--region",
      "all",
      "--filter",
      filter,
      "--rate",
      "1500",
      "--timeout",
      "250",
      "--retries",
      "12",
    ]);
    expect(all.code).toBe(0);
    const lines = all.out.trim().split("\n");
    const expected = applyMasterFilter(fleet, nodes);
    expect(expected.length).toBeGreaterThan(1000);
    expect(expected.length).toBeLessThan(fleet.length / 4);
    expect(lines.sort()).toEqual(idsOf(expected));
    expect(all.err).toBe(`${expected.length} servers\n`);

    const europe = await cli([
      "--host",
      host(),
      "--region",
      "europe",
      "--filter",
      filter,
      "--json",
      "--rate",
      "1500",
      "--timeout",
      "250",
      "--retries",
      "12",
    ]);
    const json = JSON.parse(europe.out) as { servers: string[]; complete: boolean };
    expect(json.complete).toBe(true);
    expect(json.servers.sort()).toEqual(
      idsOf(
        applyMasterFilter(
          fleet.filter((s) => s.region === MASTER_REGIONS.europe),
          nodes,
        ),
      ),
    );
  }, 60_000);

  it("reports a listing cut short by silence as incomplete, with where to resume", async () => {
    const { code, out, err } = await cli([
      "--host",
      host(),
      "--region",
      "rest",
      "--json",
      "--rate",
      "0",
      "--timeout",
      "100",
      "--retries",
      "0",
    ]);
    expect(code).toBe(3);
    const json = JSON.parse(out) as {
      servers: string[];
      complete: boolean;
      resumeFrom: string | null;
    };
    expect(json.complete).toBe(false);
    expect(json.resumeFrom).toBe(
      json.servers.length === 0 ? "0.0.0.0:0" : json.servers[json.servers.length - 1],
    );
    expect(err).toContain("--seed");
  }, 30_000);
});
