import { runMaster } from "../../src/cli/commands/master";
import { generatedFleet, runSimulateMaster } from "../../src/cli/commands/simulate-master";

describe("gsindex simulate-master", () => {
  it("serves a generated fleet over the UDP master and the Steam Web API until told to stop", async () => {
    let err = "";
    let stop: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    let started: () => void = () => undefined;
    const up = new Promise<void>((resolve) => (started = resolve));
    const running = runSimulateMaster(
      [
        "--servers",
        "600",
        "--seed",
        "7",
        "--port",
        "0",
        "--rate-limit",
        "off",
        "--steam-web-api-port",
        "0",
        "--steam-web-api-key",
        "k",
        "--per-call",
        "250",
      ],
      { stdout: { write: () => undefined }, stderr: { write: (t: string) => (err += t) } },
      () => {
        started();
        return stopped;
      },
    );
    await up;
    const masterAt = /simulated master on (\S+) listing 600 servers/.exec(err)?.[1] ?? "";
    const apiAt = /simulated Steam Web API on (\S+) /.exec(err)?.[1] ?? "";
    const expected = generatedFleet(600, 7)
      .map((s) => `${s.host}:${s.queryPort}`)
      .sort();

    try {
      let out = "";
      const io = {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: () => undefined },
      };
      expect(
        await runMaster(["--host", masterAt, "--json", "--rate", "0", "--timeout", "500"], io, {}),
      ).toBe(0);
      expect((JSON.parse(out) as { servers: string[] }).servers.sort()).toEqual(expected);
      out = "";
      expect(
        await runMaster(["--steam-web-api", "--json", "--rate", "0", "--per-call", "250"], io, {
          steamWebApiKey: "k",
          steamWebApiUrl: apiAt,
        }),
      ).toBe(0);
      expect((JSON.parse(out) as { servers: string[] }).servers.sort()).toEqual(expected);
    } finally {
      stop();
    }
    expect(await running).toBe(0);
  });

  it("refuses a bad rate limit", async () => {
    let err = "";
    expect(
      await runSimulateMaster(
        ["--rate-limit", "30/x"],
        { stdout: { write: () => undefined }, stderr: { write: (t: string) => (err += t) } },
        () => Promise.resolve(),
      ),
    ).toBe(1);
    expect(err).toContain("--rate-limit");
  });
});
