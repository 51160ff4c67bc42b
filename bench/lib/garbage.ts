import { getHeapSpaceStatistics } from "node:v8";

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
