/**
 * Node flags every way of starting the service passes on its command line, because V8 reads them only
 * when the process starts (src/service/v8-memory.ts sets the flags it can set at run time itself):
 * - `--max-semi-space-size=32`: the young generation's semi-spaces may grow to 32 MiB instead of V8's
 *   16. The crawler makes tens of kilobytes of short-lived garbage per server (answers, the JSON of its
 *   batch writes, node-postgres's buffers), and with 16 MiB a scavenge ran before much of it had died, so
 *   it was copied and promoted and then collected again by the old generation's GCs. In two runs of the
 *   100,000-server crawl part, each flag first in one of them, 32 MiB cut the crawler's CPU per server by
 *   21-31 % in the discovery (and its wall time from 74-86 s to 63-64 s), 10-18 % in the listing steady
 *   crawl and 6-22 % in the index crawl, for about 36 MiB more peak RSS (docs/BENCHMARKS-history.md,
 *   "2026-12-07: a larger young generation").
 *
 * bin/gsindex.js's first line, the Dockerfile, scripts/start.sh and scripts/demo.sh each spell these out
 * (test/service/node-flags.test.ts holds them to this list); the bench starts the service with them too.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=32"];

/** The V8 option a flag sets (`--max-semi-space-size=32` -> `max-semi-space-size`). */
function optionOf(flag: string): string {
  return flag.replace(/^--/, "").replace(/=.*$/, "").replace(/_/g, "-");
}

/** The flags of SERVICE_NODE_FLAGS that `given` (command-line flags, NODE_OPTIONS) does not set already. */
export function missingServiceFlags(given: readonly string[]): string[] {
  const set = new Set(given.map(optionOf));
  return SERVICE_NODE_FLAGS.filter((f) => !set.has(optionOf(f)));
}

/** The flags this process was started with: its command line's and NODE_OPTIONS'. */
export function startFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): string[] {
  return [...execArgv, ...(nodeOptions ?? "").split(/\s+/).filter((s) => s.startsWith("--"))];
}
