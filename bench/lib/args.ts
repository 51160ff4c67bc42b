/** Options of `npm run bench -- ...`, parsed once (node's util.parseArgs). */
import { parseArgs, type ParseArgsConfig } from "node:util";

export const PART_IDS = [
  "query",
  "decode",
  "crawl",
  "queue",
  "storage",
  "api",
  "web",
  "scale",
  "cadence",
  "shared-names",
] as const;
export type PartId = (typeof PART_IDS)[number];

/** How to run the bench: `--help` prints it, and every report repeats it under "How to run". */
export const USAGE_LINES = [
  "- `npm run bench`: every part, writes docs/BENCHMARKS.md (needs PostgreSQL and Redis reachable: DATABASE_URL / REDIS_URL, else 127.0.0.1:5432 and :6379; the bench creates and drops its own databases).",
  `- \`npm run bench -- --only query\` (or ${PART_IDS.slice(1).join(", ")}; comma separated; queue is the crawl on each queue backend, scale the crawl with 1, 2 and 4 workers, cadence QUERY_FROM_INDEX behind a master at its real rate limit): some parts, written to bench/out/BENCHMARKS.partial.md.`,
  "- `--help` (or `-h`) prints this and runs nothing; `--small` for a quick run with small sizes; sizes are also options: `--query-servers`, `--concurrency`, `--passes` (warm passes after the cold one per query process, default 2), `--crawl-fleets 10000,100000`, `--storage-servers`, `--storage-days`, `--api-seconds`, `--scale-servers 20000 --scale-workers 1,2,4` (`--scale-no-paced` leaves out its paced-listing runs), `--cadence-servers`, `--shared-names-servers 20000,100000`.",
  "- Also: `--out FILE` (where the report goes; `-` writes none), `--no-profile` (skips the CPU profiles), `--keep-db` (keeps the bench databases), `--crawl-baseline DIR` (another checkout's build crawls each fleet too, alternately), `--crawl-tuned KEY=VALUE,...` (a second crawl of the largest fleet with these settings), `--decode-ms`, `--raw-servers`, `--api-connections`.",
  "- Real A2S captures are read from GSINDEX_SHARED_DIR, else ../shared/captures/a2s; the decoder part is skipped with a note without them.",
];

/** An option the bench does not take, or a value it cannot use: the operator's mistake, said in one line. */
export class BenchArgsError extends Error {
  override readonly name = "BenchArgsError";
}

export interface BenchOptions {
  /** `--help`: print USAGE_LINES and run nothing. */
  help: boolean;
  only: PartId[];
  /** Part 1: simulated servers and the concurrencies every contender is measured at. */
  queryServers: number;
  queryConcurrency: number[];
  /**
   * Part 1: passes over the fleet after the first in each contender's (and the floor's) process: the
   * first is the cold figure, these the warm one. 0 = the cold figure only.
   */
  queryPasses: number;
  /** Part 2: how long each decoder loop runs. */
  decodeMs: number;
  /** Part 3: fleet sizes crawled end to end. */
  crawlFleets: number[];
  /** Part 3: extra crawler settings for a second, tuned crawl of the largest fleet (KEY=VALUE,...); empty = none. */
  crawlTuned: Record<string, string>;
  /**
   * Part 3: another build of gsindex (a checkout with dist/ built, e.g. main) whose crawler crawls each
   * fleet too, alternately with this one, for a before / after in one run; null = none.
   */
  crawlBaseline: string | null;
  /** Parts 4 and 5: servers and days of history generated. */
  storageServers: number;
  storageDays: number;
  /** Part 4: servers the raw window is generated for (it is ~30x larger than the long-term layout). */
  rawServers: number;
  /** Part 5: autocannon duration and connections per route. */
  apiSeconds: number;
  apiConnections: number;
  /** Part 'scale': the fleet and the worker process counts that crawl it in turn. */
  scaleServers: number;
  scaleWorkers: number[];
  /** Part 'scale' without its two paced-listing runs (they take about 3.5 minutes and measure only the listing). */
  scaleNoPaced: boolean;
  /** Cadence part: servers behind the rate-limited master (the query interval scales with them). */
  cadenceServers: number;
  /** Part 'shared-names': pool sizes the shared-player-names rule is measured over. */
  sharedNamesServers: number[];
  /** Where docs/BENCHMARKS.md goes; '-' skips writing it. */
  out: string;
  /** Keep the bench database (for looking at it afterwards). */
  keepDb: boolean;
  /** Skip the CPU profiles (faster runs while developing). */
  noProfile: boolean;
}

function ints(text: string, name: string): number[] {
  const values = text.split(",").map((t) => Number(t.trim()));
  if (values.some((v) => !Number.isInteger(v) || v <= 0))
    throw new BenchArgsError(`--${name} takes positive whole numbers, comma separated`);
  return values;
}

function int(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  const [value] = ints(text, name);
  return value ?? fallback;
}

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  only: { type: "string" },
  "query-servers": { type: "string" },
  concurrency: { type: "string" },
  passes: { type: "string" },
  "decode-ms": { type: "string" },
  "crawl-fleets": { type: "string" },
  "crawl-tuned": { type: "string" },
  "crawl-baseline": { type: "string" },
  "storage-servers": { type: "string" },
  "storage-days": { type: "string" },
  "raw-servers": { type: "string" },
  "api-seconds": { type: "string" },
  "api-connections": { type: "string" },
  "scale-servers": { type: "string" },
  "scale-workers": { type: "string" },
  "scale-no-paced": { type: "boolean" },
  "cadence-servers": { type: "string" },
  "shared-names-servers": { type: "string" },
  out: { type: "string" },
  "keep-db": { type: "boolean" },
  "no-profile": { type: "boolean" },
  small: { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

/** Every long option the bench takes (its usage names each one). */
export const OPTION_NAMES = Object.keys(OPTIONS);

export function parseBenchArgs(argv: string[]): BenchOptions {
  let parsed;
  try {
    parsed = parseOptions(argv);
  } catch (err) {
    // node:util's own errors (an unknown option, a value missing) say what was wrong in their first line.
    const why = err instanceof Error ? (err.message.split("\n")[0] ?? err.message) : String(err);
    throw new BenchArgsError(why);
  }
  return optionsOf(parsed.values);
}

function parseOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: OPTIONS,
  });
}

function optionsOf(values: ReturnType<typeof parseOptions>["values"]): BenchOptions {
  const small = values.small === true;
  const only =
    values.only === undefined ? [...PART_IDS] : values.only.split(",").map((p) => p.trim());
  for (const id of only)
    if (!(PART_IDS as readonly string[]).includes(id))
      throw new BenchArgsError(`--only: unknown part ${id} (parts: ${PART_IDS.join(", ")})`);
  return {
    help: values.help === true,
    only: only as PartId[],
    queryServers: int(values["query-servers"], "query-servers", small ? 500 : 5000),
    queryConcurrency:
      values.concurrency !== undefined ? ints(values.concurrency, "concurrency") : [100, 500],
    queryPasses:
      values.passes === undefined
        ? small
          ? 1
          : 2
        : values.passes.trim() === "0"
          ? 0
          : int(values.passes, "passes", 2),
    decodeMs: int(values["decode-ms"], "decode-ms", small ? 500 : 2000),
    crawlFleets:
      values["crawl-fleets"] !== undefined
        ? ints(values["crawl-fleets"], "crawl-fleets")
        : small
          ? [2000]
          : [10_000, 100_000],
    crawlBaseline: values["crawl-baseline"] ?? null,
    crawlTuned: Object.fromEntries(
      (values["crawl-tuned"] ?? "")
        .split(",")
        .map((kv) => kv.trim())
        .filter((kv) => kv.includes("="))
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
    ),
    storageServers: int(values["storage-servers"], "storage-servers", small ? 2000 : 100_000),
    storageDays: int(values["storage-days"], "storage-days", small ? 8 : 30),
    rawServers: int(values["raw-servers"], "raw-servers", small ? 1000 : 10_000),
    apiSeconds: int(values["api-seconds"], "api-seconds", small ? 3 : 10),
    apiConnections: int(values["api-connections"], "api-connections", 10),
    scaleServers: int(values["scale-servers"], "scale-servers", small ? 2000 : 20_000),
    scaleWorkers:
      values["scale-workers"] !== undefined
        ? ints(values["scale-workers"], "scale-workers")
        : [1, 2, 4],
    scaleNoPaced: values["scale-no-paced"] === true,
    cadenceServers: int(values["cadence-servers"], "cadence-servers", small ? 2000 : 20_000),
    sharedNamesServers:
      values["shared-names-servers"] !== undefined
        ? ints(values["shared-names-servers"], "shared-names-servers")
        : small
          ? [2000]
          : [20_000, 100_000],
    out: values.out ?? "docs/BENCHMARKS.md",
    keepDb: values["keep-db"] === true,
    noProfile: values["no-profile"] === true,
  };
}
