/**
 * `gsindex master` stopped mid-listing: a stop request prints what was listed and where to resume, and the
 * duplicate copy of that request (a Ctrl-C reaches the whole process group, and a wrapper forwards it
 * again) must find a listener still there; with none, a real signal takes its default action and kills
 * the process before it prints anything.
 */
import { runMaster } from "../../src/cli/commands/master";
import { type SimValveMaster, startSimValveMaster } from "../../src/simulator/master";
import { makeListTestFleet } from "../helpers/master-fleet";

const stopSignals = ["SIGINT", "SIGTERM"] as const;
const listenerCounts = (): number[] => stopSignals.map((s) => process.listenerCount(s));

describe("gsindex master, stopped while the master is silent", () => {
  let master: SimValveMaster;
  beforeAll(async () => {
    // One page answered, then a minute of silence: the listing waits on its second page.
    master = await startSimValveMaster({
      fleet: makeListTestFleet(500),
      rateLimit: { packetsPerWindow: 1, windowMs: 60_000, silenceMs: 60_000 },
    });
  });
  afterAll(async () => master.close());

  it("keeps listening through the stop, ignores the duplicate, and prints the resume point", async () => {
    const before = listenerCounts();
    let out = "";
    let err = "";
    const listing = runMaster(
      ["--host", `${master.address.host}:${master.address.port}`, "--region", "all"].concat([
        "--rate",
        "0",
        "--timeout",
        "60000",
        "--retries",
        "0",
      ]),
      {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (err += t) },
      },
      {},
    );
    while (master.stats.rateLimited === 0) await new Promise((r) => setTimeout(r, 10));

    process.emit("SIGINT");
    // Still listening while the listing winds down: a duplicate arriving now is caught, not fatal.
    expect(listenerCounts()).toEqual(before.map((n) => n + 1));
    process.emit("SIGINT");

    expect(await listing).toBe(3);
    const listed = out.trim().split("\n");
    expect(listed.length).toBeGreaterThan(0); // the first page, before the silence
    expect(err).toMatch(
      new RegExp(
        `^${listed.length} servers \\(INCOMPLETE: .*resume with --region all --start-region \\S+ --seed \\S+\\)\n$`,
      ),
    );
    // Nothing left behind in the process once the command returned.
    expect(listenerCounts()).toEqual(before);
  });
});
