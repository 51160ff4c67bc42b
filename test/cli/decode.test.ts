/**
 * `gsindex decode` through its run() with injected streams: the JSON-lines contract, errors with
 * code and offset, --app-id for The Ship, usage errors.
 */
import { PassThrough, Readable } from "node:stream";
import { run } from "../../src/cli/commands/decode";
import { encodeInfoResponse, encodePlayersResponse, encodeRulesResponse } from "../../src/protocol";
import { splitResponse } from "../../src/simulator/split-response";

async function decode(
  input: string,
  argv: string[] = [],
): Promise<{ code: number; lines: unknown[]; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  const errChunks: Buffer[] = [];
  stdout.on("data", (c: Buffer) => chunks.push(c));
  stderr.on("data", (c: Buffer) => errChunks.push(c));
  const code = await run(argv, { stdin: Readable.from([input]), stdout, stderr });
  const text = Buffer.concat(chunks).toString("utf8");
  const lines = text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as unknown);
  return { code, lines, stderr: Buffer.concat(errChunks).toString("utf8") };
}

const info = encodeInfoResponse({
  type: "source",
  protocol: 17,
  name: "n",
  map: "m",
  folder: "f",
  game: "g",
  appId: 440,
  players: 1,
  maxPlayers: 2,
  bots: 0,
  serverType: "d",
  environment: "l",
  visibility: 0,
  vac: 1,
  version: "1",
  edf: 0x11,
  steamId: "90152145425397767",
  gameId: "440",
});

describe("gsindex decode", () => {
  it("prints one JSON line per input line, in order, for single and split responses", async () => {
    const rules = encodeRulesResponse({
      count: 2,
      rules: [
        { name: "a", value: "x".repeat(3000) },
        { name: "b", value: "y" },
      ],
    });
    const fragments = splitResponse(rules, { format: "source", id: 9 })
      .reverse()
      .map((f) => f.toString("hex"));
    const { code, lines } = await decode(
      `${info.toString("hex")}\n\n# a comment\n${fragments.join(" ")}\nffffffff4104fce20e\nFFFFFFFF6A00\n`,
    );
    expect(code).toBe(0);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatchObject({
      kind: "info",
      value: { name: "n", appId: 440, steamId: "90152145425397767", gameId: "440", edf: 0x11 },
    });
    expect(lines[1]).toMatchObject({
      kind: "rules",
      value: { count: 2, rules: [{ name: "a" }, { name: "b", value: "y" }] },
    });
    expect(lines[2]).toEqual({
      kind: "challenge",
      value: { challenge: 249756676, challengeHex: "04fce20e" },
    });
    expect(lines[3]).toEqual({ kind: "ping", value: {} });
  });

  it('reports a malformed line as {"error":{code,message,offset}} and keeps going; exit status 1', async () => {
    const { code, lines } = await decode("ffffffff49\nzz\nffffffff4400\n");
    expect(code).toBe(1);
    expect(lines[0]).toEqual({
      error: { code: "TRUNCATED", message: expect.any(String) as string, offset: 5 },
    });
    expect(lines[1]).toEqual({
      error: { code: "INVALID_ARGUMENT", message: expect.any(String) as string, offset: null },
    });
    expect(lines[2]).toEqual({ kind: "players", value: { count: 0, players: [] } });
  });

  it('marks a truncated list with "truncated":true rather than failing', async () => {
    const { code, lines } = await decode("ffffffff44030061000100000000000000\n");
    expect(code).toBe(0);
    expect(lines[0]).toEqual({
      kind: "players",
      value: {
        count: 3,
        players: [{ index: 0, name: "a", score: 1, duration: 0 }],
        truncated: true,
      },
    });
  });

  it("--app-id 2400 reads The Ship deaths and money after all entries", async () => {
    const players = encodePlayersResponse(
      {
        count: 1,
        players: [{ index: 0, name: "p", score: 2, duration: 1.5, deaths: 3, money: 4 }],
      },
      { appId: 2400 },
    );
    const ship = await decode(players.toString("hex") + "\n", ["--app-id", "2400"]);
    expect(ship.lines[0]).toEqual({
      kind: "players",
      value: {
        count: 1,
        players: [{ index: 0, name: "p", score: 2, duration: 1.5, deaths: 3, money: 4 }],
      },
    });
  });

  it("rejects a bad --app-id and unknown options with status 2; --help documents the truncation policy", async () => {
    expect((await decode("", ["--app-id", "x"])).code).toBe(2);
    expect((await decode("", ["--bogus"])).code).toBe(2);
    const stdout = new PassThrough();
    let help = "";
    stdout.on("data", (c: Buffer) => (help += c.toString()));
    expect(
      await run(["--help"], { stdin: Readable.from([]), stdout, stderr: new PassThrough() }),
    ).toBe(0);
    expect(help).toContain('"truncated":true');
  });
});
