import {
  BenchArgsError,
  OPTION_NAMES,
  parseBenchArgs,
  PART_IDS,
  USAGE_LINES,
} from "../../bench/lib/args";

describe("npm run bench's options", () => {
  it("takes --help and -h", () => {
    expect(parseBenchArgs(["--help"]).help).toBe(true);
    expect(parseBenchArgs(["-h"]).help).toBe(true);
    expect(parseBenchArgs([]).help).toBe(false);
  });

  it("says in one line which option it does not know, as its own error", () => {
    const attempt = (): unknown => parseBenchArgs(["--crawl-fleet", "1000"]);
    expect(attempt).toThrow(BenchArgsError);
    expect(attempt).toThrow(/'--crawl-fleet'/);
    try {
      attempt();
    } catch (err) {
      expect((err as Error).message).not.toContain("\n");
    }
  });

  it("refuses a stray word, an unknown part and a size that is not a positive whole number", () => {
    expect(() => parseBenchArgs(["crawl"])).toThrow(BenchArgsError);
    expect(() => parseBenchArgs(["--only", "crawl,nope"])).toThrow(/unknown part nope/);
    expect(() => parseBenchArgs(["--crawl-fleets", "10000,-5"])).toThrow(BenchArgsError);
    expect(() => parseBenchArgs(["--query-servers"])).toThrow(BenchArgsError);
  });

  it("lists every part and every option in its usage", () => {
    const usage = USAGE_LINES.join("\n");
    for (const id of PART_IDS) expect(usage).toContain(id);
    for (const option of OPTION_NAMES) expect(usage).toContain(`--${option}`);
  });
});
