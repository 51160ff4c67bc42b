/**
 * What one call of a piece of the crawl costs, for the scripts that measure a piece alone (bench/crawl/
 * rules-digest.ts, answer-status.ts, address-check.ts), each against another checkout's build with `--baseline`.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { getHeapSpaceStatistics } from "node:v8";

/** `--servers`, `--rounds` and `--baseline DIR` (a checkout with its dist built), as each script takes them. */
export function pieceArgs(defaultServers: number): {
  servers: number;
  rounds: number;
  baseline: string | undefined;
} {
  const { values } = parseArgs({
    options: {
      servers: { type: "string" },
      rounds: { type: "string" },
      baseline: { type: "string" },
    },
  });
  return {
    servers: Number(values.servers ?? defaultServers),
    rounds: Number(values.rounds ?? 5),
    baseline: values.baseline,
  };
}

/** Microseconds of CPU per call over `passes` passes of every item. */
export function usPerCall<T>(
  call: (item: T) => unknown,
  items: readonly T[],
  passes: number,
): number {
  const start = process.cpuUsage();
  for (let p = 0; p < passes; p++) for (const item of items) call(item);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (items.length * passes);
}

const newSpaceUsed = (): number =>
  getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_used_size ?? NaN;

/**
 * Bytes a call leaves in V8's young generation (objects and strings it allocates), over `calls` calls of
 * `call(i)`: the growth of the new space over a run too short to fill it, the least of seven runs, since a
 * scavenge inside one makes it read low or negative (those are left out). NaN when every run was cut so.
 */
export function bytesPerCall(call: (i: number) => unknown, calls = 500): number {
  let least = Infinity;
  for (let run = 0; run < 7; run++) {
    const before = newSpaceUsed();
    for (let i = 0; i < calls; i++) call(run * calls + i);
    const grown = newSpaceUsed() - before;
    if (grown >= 0) least = Math.min(least, grown / calls);
  }
  return Number.isFinite(least) ? least : NaN;
}

/** A module of the baseline checkout's build: `distPath` is under its root, e.g. "dist/crawler/address-policy.js". */
export function baselineModule<T>(baseline: string, distPath: string): T {
  return require(path.resolve(baseline, distPath)) as T;
}

/**
 * Prints `rounds` rounds of each contender's `figure`, in turn within a round and in the other order in the
 * next (first one then the other), so that neither build always runs first.
 */
export function printAlternatedRounds<C>(
  contenders: readonly C[],
  rounds: number,
  figure: (contender: C) => string,
  per: string,
): void {
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? contenders : [...contenders].reverse();
    console.log(`round ${round}: ${order.map(figure).join("; ")} per ${per}`);
  }
}
