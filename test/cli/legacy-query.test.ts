import { PassThrough } from "node:stream";
import { run as runDecode } from "../../src/cli/commands/decode";
import { extractProtocol, sourceQueryArgv } from "../../src/cli/commands/legacy-query";
import { run as runQuery } from "../../src/cli/commands/query";
import { parseAddressListEntry } from "../../src/crawler/sources/address-list-entries";
import { ase } from "../../src/protocol";
import { playersOf } from "../../src/simulator/content";
import { startFleet } from "../../src/simulator/fleet";
import type { RunningFleet } from "../../src/simulator/fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { capture } from "../helpers/cli-capture";
import { sharedDir } from "../helpers/shared-dir";
import { simSpec } from "../helpers/sim";
import { loadLegacyCaptures } from "../protocol/legacy/capture-files";

async function decode(
  argv: string[],
  input: string,
): Promise<{ code: number; out: string; err: string }> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  stdin.end(input);
  const code = await runDecode(argv, { stdin, stdout, stderr });
  return { code, out, err };
}

describe("--protocol argument handling", () => {
  it("finds --protocol in either form and folds --query-port into HOST:PORT for source", () => {
    expect(extractProtocol(["1.2.3.4:5", "--protocol", "ase", "--json"])).toEqual({
      protocol: "ase",
      rest: ["1.2.3.4:5", "--json"],
    });
    expect(extractProtocol(["--protocol=quake3"])).toEqual({ protocol: "quake3", rest: [] });
    expect(extractProtocol(["x"])).toEqual({ protocol: null, rest: ["x"] });
    expect(sourceQueryArgv(["127.0.0.1:27015", "--query-port", "27016", "--json"])).toEqual([
      "127.0.0.1:27016",
      "--json",
    ]);
    expect(sourceQueryArgv(["[::1]:1", "--query-port=2"])).toEqual(["[::1]:2"]);
  });

  it("refuses an unknown protocol", async () => {
    const c = capture();
    expect(await runQuery(["127.0.0.1:1", "--protocol", "nope"], c.io)).toBe(2);
    expect(c.err()).toContain("unknown protocol 'nope'");
  });
});

describe("gsindex query --protocol against simulated servers", () => {
  let fleet: RunningFleet;
  let quake3: SimServerSpec;
  let ase: SimServerSpec;
  beforeAll(async () => {
    fleet = await startFleet([
      { ...simSpec({}, { index: 30, state: { players: 5, bots: 0 } }), protocol: "quake3" },
      { ...simSpec({}, { index: 31, state: { players: 3, bots: 0 } }), protocol: "ase" },
    ]);
    [quake3, ase] = fleet.specs as [SimServerSpec, SimServerSpec];
  });
  afterAll(() => fleet.stop());

  it("prints the normalised status with raw beside it (--json)", async () => {
    const c = capture();
    const code = await runQuery(
      [`${quake3.host}:${quake3.queryPort}`, "--protocol", "quake3", "--json", "--timeout", "1000"],
      c.io,
    );
    expect(c.err()).toBe("");
    expect(code).toBe(0);
    const json = JSON.parse(c.out()) as {
      status: Record<string, unknown>;
      raw: Record<string, string>;
    };
    expect(json.status).toMatchObject({
      protocol: "quake3",
      name: quake3.state.name,
      map: quake3.state.map,
      players: 5,
    });
    expect(json.raw.sv_hostname).toBe(quake3.state.name);
  });

  it("takes the query port the crawler stores and the API shows (ASE: the game port + 123)", async () => {
    // An address list names an ASE server by its query port and game port, as the crawler stores it.
    const listed = parseAddressListEntry(
      `ase://${ase.host}:${ase.queryPort} game=${ase.queryPort - 123}`,
      "source",
    );
    expect(listed).toMatchObject({ queryPort: ase.queryPort, gamePort: ase.queryPort - 123 });
    const c = capture();
    expect(
      await runQuery(
        [
          `${listed!.host}:${listed!.queryPort}`,
          "--protocol",
          "ase",
          "--json",
          "--timeout",
          "1000",
        ],
        c.io,
      ),
    ).toBe(0);
    expect(JSON.parse(c.out())).toMatchObject({
      status: { protocol: "ase", name: ase.state.name, players: 3 },
    });
  });

  it("applies the ASE +123 offset to --game-port, and --query-port overrides it", async () => {
    const c = capture();
    expect(
      await runQuery(
        [
          ase.host,
          "--game-port",
          String(ase.queryPort - 123),
          "--protocol",
          "ase",
          "--timeout",
          "1000",
        ],
        c.io,
      ),
    ).toBe(0);
    expect(c.out()).toContain(`Name     ${ase.state.name}`);
    for (const p of playersOf(ase)) expect(c.out()).toContain(p.name);
    expect(c.out()).toContain("Raw (");
    const d = capture();
    expect(
      await runQuery(
        [
          `${ase.host}:9`,
          "--protocol",
          "ase",
          "--query-port",
          String(ase.queryPort),
          "--json",
          "--timeout",
          "1000",
        ],
        d.io,
      ),
    ).toBe(0);
    expect(JSON.parse(d.out())).toMatchObject({ status: { protocol: "ase", players: 3 } });
  });

  it("exits 1 with the error code when the server is silent", async () => {
    const c = capture();
    expect(
      await runQuery(
        [
          `${quake3.host}:${quake3.queryPort}`,
          "--protocol",
          "doom3",
          "--timeout",
          "150",
          "--retries",
          "0",
        ],
        c.io,
      ),
    ).toBe(1);
    expect(c.err()).toContain("TIMEOUT");
  });
});

describe("gsindex decode --protocol", () => {
  it("decodes a constructed reply and reports errors per line", async () => {
    const reply = ase.encodeAseResponse({
      gameName: "mta",
      gamePort: "22003",
      hostname: "Box",
      gameType: "DM",
      map: "SX",
      version: "1.4",
      password: "0",
      numPlayers: "1",
      maxPlayers: "8",
      rules: [],
      players: [{ flags: 0x11, name: "Bob", ping: "40" }],
    });
    const r = await decode(["--protocol", "ase"], `${reply.toString("hex")}\n# comment\n4559\n`);
    expect(r.code).toBe(1);
    const [ok, bad] = r.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(ok).toMatchObject({
      status: {
        protocol: "ase",
        name: "Box",
        players: 1,
        playerList: [{ name: "Bob", pingMs: 40 }],
      },
      raw: { hostname: "Box" },
    });
    expect(bad).toMatchObject({ error: { code: "TRUNCATED" } });
  });

  const dir = sharedDir();
  (dir === null ? it.skip : it)(
    "decodes every legacy capture it is given (skipped without ../shared)",
    async () => {
      const protocolOf: Record<string, string> = {
        "gamespy3-jc2mp": "gamespy3",
        "doom3-quake4": "doom3",
        "doom3-etqw": "doom3",
        "doom3-etqw-infoex": "doom3",
        "halflife-won": "halflife",
        "goldsrc-a2s": "halflife",
      };
      for (const c of loadLegacyCaptures(dir!)) {
        const r = await decode(
          ["--protocol", protocolOf[c.protocol] ?? c.protocol],
          `${c.packets_hex.join(" ")}\n`,
        );
        expect({ file: c.file, code: r.code, err: r.err }).toEqual({
          file: c.file,
          code: 0,
          err: "",
        });
        const summaryName = c.expected.summary?.name;
        if (typeof summaryName === "string" && summaryName.trim() !== "")
          expect((JSON.parse(r.out) as { status: { name: string } }).status.name).not.toBe("");
      }
    },
  );
});
