import { spawnSync } from "node:child_process";
import { ConfigError, loadConfig } from "../../src/shared/config";
import { memoryFlags } from "../../src/service/v8-memory";

/**
 * A child Node process that sets the given V8 flags at run time (as the service does), then allocates
 * a live set with garbage churning through it and prints its peak heap size. Stderr carries V8's
 * complaint about any flag it does not know.
 */
function churn(flags: string[]): { peakHeapBytes: number; stderr: string } {
  const script = `
    const v8 = require("node:v8");
    for (const f of JSON.parse(process.argv[1])) v8.setFlagsFromString(f);
    const live = [];
    for (let i = 0; i < 200000; i++) live.push({ a: "x" + i, b: i, c: [i, i + 1] });
    let peak = 0;
    const keep = [];
    for (let round = 0; round < 200; round++) {
      const batch = [];
      for (let i = 0; i < 20000; i++) batch.push({ s: "s" + round + ":" + i, n: i, arr: new Array(8).fill(i) });
      keep.push(batch);
      if (keep.length > 15) keep.shift();
      peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    console.log(peak);
  `;
  const r = spawnSync(process.execPath, ["-e", script, JSON.stringify(flags)], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  return { peakHeapBytes: Number(r.stdout.trim()), stderr: r.stderr };
}

describe("the service's memory settings", () => {
  it("default to a 100 % heap growth and WebAssembly on Liftoff only", () => {
    const c = loadConfig({});
    expect(c.heapGrowthPercent).toBe(100);
    expect(c.wasmOptimize).toBe(false);
    expect(memoryFlags(c)).toEqual(["--heap-growing-percent=100", "--liftoff-only"]);
  });

  it("leave V8's own behaviour when switched off", () => {
    const c = loadConfig({ HEAP_GROWTH_PERCENT: "0", WASM_OPTIMIZE: "1" });
    expect(memoryFlags(c)).toEqual([]);
    expect(memoryFlags(loadConfig({ HEAP_GROWTH_PERCENT: "25" }))).toEqual([
      "--heap-growing-percent=25",
      "--liftoff-only",
    ]);
  });

  it("reject values that are not a percentage or a switch", () => {
    expect(() => loadConfig({ HEAP_GROWTH_PERCENT: "-1" })).toThrow(ConfigError);
    expect(() => loadConfig({ HEAP_GROWTH_PERCENT: "1.5" })).toThrow(ConfigError);
    expect(() => loadConfig({ WASM_OPTIMIZE: "maybe" })).toThrow(ConfigError);
  });

  it("are flags V8 knows, and a small heap growth keeps the heap smaller than V8's default", () => {
    const flagged = churn(memoryFlags({ heapGrowthPercent: 10, wasmOptimize: false }));
    const plain = churn([]);
    // An unknown flag is not an error in setFlagsFromString: V8 only says so on stderr.
    expect(flagged.stderr).toBe("");
    // Same allocations: V8's own factor (up to 4x on a machine with RAM to spare) lets garbage pile up.
    expect(flagged.peakHeapBytes).toBeLessThan(plain.peakHeapBytes * 0.8);
  });
});
