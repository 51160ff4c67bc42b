/**
 * V8 flags the service sets on itself at start, so that its memory follows the settings and not V8's
 * defaults for a machine with plenty of RAM (docs/BENCHMARKS-history.md, "End-to-end crawl"):
 * - HEAP_GROWTH_PERCENT: after each full GC, V8 lets the heap grow to (1 + percent / 100) times what
 *   survived before the next one. By default it picks up to 4x on a big machine, and the crawler's heap
 *   (about 80 MiB alive at 100,000 servers) grew to 350 MiB of mostly garbage. Each halving of the
 *   growth roughly doubles the full GCs: 50 % cost the crawler about a fifth more CPU, 100 % little.
 * - WASM_OPTIMIZE=0 (the default): Prisma's query compiler is a WebAssembly module, and V8 compiles it
 *   twice, with Liftoff at once and with TurboFan in the background; the second copy costs about 50 MiB
 *   of RSS and measured no faster per Prisma call. Liftoff only keeps the first.
 * Set here rather than as node flags so that every way of starting the service (`gsindex serve`,
 * `npm start`, the Docker image, `gsindex demo`) and `gsindex crawl --once` gets them. Both flags are read by V8 when it uses
 * them (at each GC, at each WebAssembly compile), so setting them at run time works, before Prisma
 * compiles its module (the first query).
 */
import { setFlagsFromString } from "node:v8";
import type { Logger } from "../shared/logger";
import { missingServiceFlags, startFlags } from "./node-flags";

export interface MemorySettings {
  /** 0 leaves V8's own growing factor. */
  heapGrowthPercent: number;
  wasmOptimize: boolean;
}

export function memoryFlags(s: MemorySettings): string[] {
  const flags: string[] = [];
  if (s.heapGrowthPercent > 0) flags.push(`--heap-growing-percent=${s.heapGrowthPercent}`);
  if (!s.wasmOptimize) flags.push("--liftoff-only");
  return flags;
}

/** Applies the flags to this process (all of it: they are V8's, not a role's) and returns them. */
export function applyMemoryFlags(s: MemorySettings): string[] {
  const flags = memoryFlags(s);
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}

/**
 * Applies the flags before anything compiles Prisma's WebAssembly (its first query), and logs them; says
 * which of the start-only flags (node-flags.ts) the process was started without, since it cannot set them.
 */
export function applyMemorySettings(s: MemorySettings, logger: Logger): void {
  const flags = applyMemoryFlags(s);
  if (flags.length > 0) logger.debug({ v8Flags: flags }, "memory settings");
  const missing = missingServiceFlags(startFlags());
  if (missing.length > 0)
    logger.info(
      { missingNodeFlags: missing },
      "node was started without these flags, which V8 reads only at start; the crawl costs more CPU without them (bin/gsindex.js, npm start and the Docker image pass them)",
    );
}
