import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { missingServiceFlags, SERVICE_NODE_FLAGS, startFlags } from "../../src/service/node-flags";
import { applyMemorySettings } from "../../src/service/v8-memory";
import type { Logger } from "../../src/shared/logger";

const root = path.resolve(__dirname, "..", "..");
const read = (file: string): string => readFileSync(path.join(root, file), "utf8");

/**
 * The largest the young generation got in a child node started with `flags`, in MiB, while it keeps a
 * rolling window of objects alive (a high survival rate is what makes V8 grow the semi-spaces).
 */
function youngGenerationPeakMiB(flags: readonly string[]): number {
  const script = `
    const v8 = require("node:v8");
    const keep = [];
    let peak = 0;
    for (let i = 0; i < 3e6; i++) {
      keep.push({ a: i, b: [i] });
      if (keep.length > 400000) keep.splice(0, 200000);
      if (i % 50000 === 0) {
        const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === "new_space");
        peak = Math.max(peak, s.space_size);
      }
    }
    console.log(peak / 1048576);
  `;
  const r = spawnSync(process.execPath, [...flags, "-e", script], {
    encoding: "utf8",
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  return Number(r.stdout.trim());
}

describe("the node flags the service starts with", () => {
  it("are on every way of starting it: bin/gsindex.js, the Docker image, npm start and npm run demo", () => {
    const shebang = read("bin/gsindex.js").split("\n")[0] as string;
    const dockerCmd = read("Dockerfile")
      .split("\n")
      .find((l) => l.startsWith("CMD ")) as string;
    const startLine = read("scripts/start.sh")
      .split("\n")
      .find((l) => l.includes("bin/gsindex.js")) as string;
    const demoLine = read("scripts/demo.sh")
      .split("\n")
      .find((l) => l.includes("bin/gsindex.js")) as string;
    expect(shebang.startsWith("#!/usr/bin/env -S node ")).toBe(true);
    for (const line of [shebang, dockerCmd, startLine, demoLine]) {
      for (const flag of SERVICE_NODE_FLAGS) expect(line).toContain(flag);
    }
    // The flags come before the script: after it they would be the script's arguments, not node's.
    for (const line of [dockerCmd, startLine, demoLine]) {
      for (const flag of SERVICE_NODE_FLAGS)
        expect(line.indexOf(flag)).toBeLessThan(line.indexOf("bin/gsindex.js"));
    }
  });

  it("are flags node takes, and let the young generation grow past V8's default", () => {
    const plain = youngGenerationPeakMiB([]);
    const flagged = youngGenerationPeakMiB(SERVICE_NODE_FLAGS);
    // V8's default: two semi-spaces of at most 16 MiB each on a 64-bit machine.
    expect(plain).toBeLessThanOrEqual(32);
    expect(flagged).toBeGreaterThan(32);
  });

  it("count as given from the command line or NODE_OPTIONS, in either spelling V8 reads", () => {
    expect(missingServiceFlags(startFlags([], undefined))).toEqual([...SERVICE_NODE_FLAGS]);
    expect(missingServiceFlags(startFlags([...SERVICE_NODE_FLAGS], undefined))).toEqual([]);
    expect(missingServiceFlags(startFlags([], " --max-semi-space-size=64  --trace-gc"))).toEqual(
      [],
    );
    expect(missingServiceFlags(startFlags(["--max_semi_space_size=8"], ""))).toEqual([]);
    expect(missingServiceFlags(startFlags(["--max-old-space-size=512"], undefined))).toEqual([
      ...SERVICE_NODE_FLAGS,
    ]);
  });

  it("are named in the service's log when it was started without them", () => {
    const lines: { fields: unknown; msg: string }[] = [];
    const logger = {
      debug: () => undefined,
      info: (fields: unknown, msg: string) => lines.push({ fields, msg }),
    } as unknown as Logger;
    const saved = { argv: process.execArgv, options: process.env.NODE_OPTIONS };
    try {
      Object.defineProperty(process, "execArgv", { value: [], configurable: true });
      delete process.env.NODE_OPTIONS;
      applyMemorySettings({ heapGrowthPercent: 0, wasmOptimize: true }, logger);
      expect(lines).toHaveLength(1);
      expect(lines[0]?.fields).toEqual({ missingNodeFlags: [...SERVICE_NODE_FLAGS] });
      lines.length = 0;
      Object.defineProperty(process, "execArgv", {
        value: [...SERVICE_NODE_FLAGS],
        configurable: true,
      });
      applyMemorySettings({ heapGrowthPercent: 0, wasmOptimize: true }, logger);
      expect(lines).toHaveLength(0);
    } finally {
      Object.defineProperty(process, "execArgv", { value: saved.argv, configurable: true });
      if (saved.options === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved.options;
    }
  });
});
