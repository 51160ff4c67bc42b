/**
 * Part 3, end-to-end crawl: a fleet of simulated servers (one `gsindex simulate` child per 10,000
 * servers, each on its own 127.88.r.x address, r one byte per bench run) behind the simulated Valve master (rate limit off), crawled
 * by the real service (`gsindex serve --role scheduler --role worker`: BullMQ on Redis, PostgreSQL) into a
 * fresh database, from the first listing to every state and sample committed and the crawl closed.
 * The part's runs then crawl the same source again on the same crawler (the listing steady crawl, every
 * server known), and then the built-in `index` source (the index crawl, every known server re-queried without
 * listing): the crawl a default deployment (QUERY_FROM_INDEX=1) repeats every few minutes for months.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import type { Client } from "pg";
import type { BenchOptions } from "../lib/args";
import { connect, createBenchDb } from "../lib/bench-db";
import { crawlerEnv } from "../lib/crawler-env";
import {
  benchScript,
  RUN_OCTET,
  runChild,
  serviceNodeArgs,
  spawnNode,
  spawnService,
  stopChild,
} from "../lib/child";
import type { ContenderResult, PassResult } from "../query/contender";
import { deleteRedisPrefix } from "../../src/shared/redis-prefix";
import { createCrawlQueues } from "../../src/crawler/queues";
import { heapMarkdown, summariseHeapSnapshot, type HeapSummary } from "../lib/heap-snapshot";
import {
  latestProfile,
  profileMarkdown,
  summariseProfile,
  type ProfileSummary,
} from "../lib/profile";
import { currentRssBytes, peakRssBytes, treePids } from "../lib/procs";
import { mib, num, seconds, table, type PartResult, type Verdict } from "../lib/report";
import { startSimulator } from "../lib/simulator";
import { startSimValveMaster } from "../../src/simulator/master";
import { behaviourOf } from "../../src/simulator/make-fleet";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { measureCloseWork, type CloseWork } from "./close-work";
import { CrawlMeters, untilCrawlCloses, windowOf, type CrawlWindow } from "./crawl-window";
import { crawlSteady, deferIndexTick, NO_LATER_CRAWLS, type SteadyCrawls } from "./steady-crawls";
import { SERVICE_NODE_FLAGS } from "../../src/service/node-flags";
import { loadConfig } from "../../src/shared/config";

const SERVERS_PER_PROCESS = 10_000;
const TARGET_100K_MS = 60_000;
/** Issue 14's "<= 400 MB" in decimal megabytes (381.5 MiB), the stricter reading of its unit. */
const TARGET_RSS_BYTES = 400_000_000;
const CRAWL_DEADLINE_MS = 12 * 60_000;
/** A crawl's close runs the shared-names rule and the roll-up: at most this long before the next crawl measured. */
const FINISH_JOB_DEADLINE_MS = 3 * 60_000;
const SOURCE_NAME = "bench-master";
/**
 * Seconds of the fleet's life per second of the bench: a server's crawls here follow each other about 75 s
 * apart (a crawl and its close), which at 4x is the 5 minutes between a default index's queries of it.
 */
const PLAYER_CLOCK_RATE = 4;

/** QUERY_INTERVAL_MS of the runs with steady crawls: longer than a run, so the scheduler starts no index crawl in it. */
const INDEX_INTERVAL_MS = 3_600_000;
/** The index's own cost: crawler + PostgreSQL CPU per server at most this multiple of the bare query library's. */
const TARGET_COST_RATIO = 2;
/** Crawler peak RSS at 100,000 servers at most this multiple of its peak at 10,000. */
const TARGET_RSS_GROWTH = 1.3;
/** Servers of the crawled fleet the bare query library queries after the crawl (CPU per server does not depend on the fleet's size). */
const BARE_QUERY_SERVERS = 20_000;

/** The run's top-level crawl figures are the discovery crawl's. */
export interface CrawlRun extends CrawlWindow {
  servers: number;
  /** The checkout whose crawler ran (another build given by --crawl-baseline), null for this one. */
  baseline: string | null;
  /** Crawler settings changed from the defaults (none for the default runs). */
  settings: Record<string, string>;
  simulatorProcesses: number;
  expectedAnswering: number;
  /** Servers of the fleet that hold a query up: silent (a timeout), slow (delayed replies), lossy (re-sends). */
  fleetOdd: { silent: number; slow: number; lossy: number };
  statesMatching: number;
  rows: Record<string, number>;
  bytesWritten: number;
  crawlerPeakRssBytes: number;
  /** Crawler RSS when the crawl had just started (loaded, connected, nothing queried yet). */
  crawlerStartRssBytes: number;
  /** Job attempts that failed ('job failed: retried' and 'job failed for good' in the crawler's log). */
  failedAttempts: number;
  /** Why queries failed: last_error codes of the servers, most frequent first. */
  failures: Array<{ code: string; servers: number }>;
  /**
   * The second crawl of the same source on the same crawler process, every server known (started once the
   * discovery crawl's close was done); null when not asked for, or when the discovery did not finish.
   */
  steady: CrawlWindow | null;
  /** The index source's crawl after the steady one, on the same crawler; null as `steady`, or when that did not finish. */
  index: CrawlWindow | null;
  /** Index crawls the scheduler opened by itself before the measured one (none expected: deferIndexTick). */
  indexBefore: SteadyCrawls["indexBefore"];
  /** What each crawl's close did after its row closed (close-work.ts): in none of the crawl windows. */
  discoveryClose: CloseWork | null;
  steadyClose: CloseWork | null;
  indexClose: CloseWork | null;
  /** Whose player names the steady and index crawls changed (players leaving and joining). */
  steadyNames: SteadyCrawls["steadyNames"];
  indexNames: SteadyCrawls["indexNames"];
  /**
   * The bare query library (queryServer of src/protocol, what the crawler calls) over the same fleet,
   * same timeout, re-sends and concurrency, no database: its CPU per server is the floor the crawl's
   * own cost is measured against.
   */
  bare: (BarePass & { warm: BarePass | null }) | null;
  profile?: ProfileSummary;
  heap?: HeapSummary;
  heapRssBytes?: number;
}

type Written = Pick<CrawlRun, "rows" | "failures" | "bytesWritten" | "statesMatching">;

/** What the crawls so far wrote: rows per table, why servers failed, bytes, states that match the fleet. */
async function writtenSoFar(
  c: Client,
  specs: SimServerSpec[],
  sizeBefore: number,
): Promise<Written> {
  const count1 = async (sql: string): Promise<number> =>
    Number((await c.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
  const rows: Record<string, number> = {};
  for (const t of [
    "game_server",
    "server_sample",
    "server_day",
    "population_rollup",
    "crawl",
    "crawl_run",
    "crawl_batch",
  ])
    rows[t] = await count1(`SELECT count(*)::text AS n FROM ${t}`);
  const failures = (
    await c.query<{ code: string; n: string }>(
      "SELECT COALESCE(last_error, '?') AS code, count(*)::text AS n FROM game_server WHERE status <> 'ONLINE' GROUP BY 1 ORDER BY 2 DESC LIMIT 5",
    )
  ).rows.map((r) => ({ code: r.code, servers: Number(r.n) }));
  const sizeAfter = await databaseBytes(c);
  const expected = JSON.stringify(
    specs.filter(answers).map((s) => ({
      address: s.host,
      port: s.queryPort,
      name: s.state.name,
      map: s.state.map,
      players: Math.min(s.state.players, 255),
    })),
  );
  // status as text: with nothing analyzed (autovacuum off here) the planner ANDed the status index into
  // the lookup of each of the 100,000 servers, minutes of PostgreSQL CPU; this way it is one unique-key probe each.
  const statesMatching = await count1(
    `SELECT count(*)::text AS n FROM game_server g JOIN jsonb_to_recordset('${expected.replace(/'/g, "''")}'::jsonb) AS x(address text, port int, name text, map text, players int)
       ON g.address = x.address AND g.query_port = x.port WHERE g.status::text = 'ONLINE' AND g.name = x.name AND g.map = x.map AND g.players = x.players`,
  );
  return { rows, failures, bytesWritten: sizeAfter - sizeBefore, statesMatching };
}

function answers(s: SimServerSpec): boolean {
  const b = behaviourOf(s);
  return !b.silent && !b.malformed;
}

async function databaseBytes(c: Client): Promise<number> {
  return Number(
    (await c.query<{ s: string }>("SELECT pg_database_size(current_database())::text AS s")).rows[0]
      ?.s ?? 0,
  );
}

export async function crawlOnce(
  count: number,
  outDir: string,
  log: (line: string) => void,
  profileDir: string | null,
  settings: Record<string, string> = {},
  baseline: string | null = null,
  /** steady: crawl the source, then the index source, again once the discovery crawl is done, on the same crawler. */
  { steady = false }: { steady?: boolean } = {},
): Promise<CrawlRun> {
  const processes = Math.max(1, Math.ceil(count / SERVERS_PER_PROCESS));
  const hosts = Array.from({ length: processes }, (_v, i) => `127.88.${RUN_OCTET}.${i + 1}`);
  const db = await createBenchDb("crawl");
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `gsbench${process.pid}`;
  log(`crawl ${num(count)}: starting ${processes} simulator process(es)`);
  const sim = await startSimulator({
    servers: count,
    processes,
    hosts,
    basePort: 20000,
    // A real server's player list changes between any two crawls (its players' connection times run on),
    // so a steady crawl writes every populated server's list again; with fixed replies it would write none.
    // Its players also leave and others join (docs/simulator.md), which changes the search table's rows too.
    // The fleet's clock runs at PLAYER_CLOCK_RATE, so crawls a minute or two apart see a real cadence's churn.
    playerSessions: true,
    playerClockRate: PLAYER_CLOCK_RATE,
    jsonOut: path.join(outDir, `crawl-fleet-${count}.json`),
  });
  const master = await startSimValveMaster({
    fleet: sim.specs,
    rateLimit: false,
    host: "127.0.0.1",
    port: 0,
  });
  const c = await connect(db.url);
  // The bench's own queue connection, to start the steady crawls; on the crawler's queue store.
  const queues = steady
    ? createCrawlQueues({
        ...(settings.QUEUE_BACKEND === "postgres"
          ? { backend: "postgres" as const, databaseUrl: db.url }
          : { redisUrl }),
        prefix,
        jobAttempts: 3,
        jobBackoffMs: 1000,
      })
    : null;
  let crawler: ReturnType<typeof spawnNode> | null = null;
  try {
    const sizeBefore = await databaseBytes(c);
    const simPids = sim.child.pid === undefined ? [] : treePids(sim.child.pid);
    const meters = new CrawlMeters(simPids, null);
    const env = crawlerEnv(
      {
        databaseUrl: db.url,
        redisUrl,
        prefix,
        master: {
          name: SOURCE_NAME,
          host: master.address.host,
          port: master.address.port,
          intervalMs: 3_600_000,
          // query: the master's crawls list and query everything even with QUERY_FROM_INDEX on, so the
          // discovery and the listing steady crawl measure what they measured with it off.
          options: { requestsPerMinute: 0, ...(steady ? { query: true } : {}) },
        },
      },
      {
        // 10,000 simulated servers per loopback address: not a farm of fakes.
        FARM_RULE_EXEMPT_RANGES: "127.0.0.0/8",
        CRAWL_INTERVAL_MS: "3600000",
        // The index source exists only with QUERY_FROM_INDEX on, and its crawl is a default deployment's steady state.
        ...(steady ? { QUERY_FROM_INDEX: "1", QUERY_INTERVAL_MS: String(INDEX_INTERVAL_MS) } : {}),
        ...settings,
      },
    );
    const nodeArgs = profileDir
      ? [
          "--cpu-prof",
          `--cpu-prof-dir=${profileDir}`,
          "--heapsnapshot-signal=SIGUSR2",
          `--diagnostic-dir=${profileDir}`,
        ]
      : [];
    let heapRssBytes: number | undefined;
    if (queues) await deferIndexTick(c, queues, INDEX_INTERVAL_MS);
    log(`crawl ${num(count)}: starting the crawler (gsindex serve --role scheduler --role worker)`);
    const started = performance.now();
    const proc = spawnService(["serve", "--role", "scheduler", "--role", "worker"], {
      root: baseline ?? undefined,
      env,
      nodeArgs,
      raiseFileLimit: true,
    });
    crawler = proc;
    proc.stdout?.resume();
    let stderrTail = "";
    let stderrLine = "";
    let failedAttempts = 0;
    proc.stderr?.on("data", (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString()).slice(-4000);
      const lines = (stderrLine + chunk.toString()).split("\n");
      stderrLine = lines.pop() ?? "";
      failedAttempts += lines.filter((l) => l.includes('"msg":"job failed')).length;
    });
    const crawlerPid = proc.pid as number;
    const checkCrawler = (): void => {
      if (proc.exitCode !== null)
        throw new Error(`the crawler exited (${proc.exitCode}): ${stderrTail}`);
    };
    let peakRss = 0;
    let startRss = NaN;
    const row = await untilCrawlCloses(
      c,
      "0",
      SOURCE_NAME,
      started,
      CRAWL_DEADLINE_MS,
      (r) => {
        checkCrawler();
        peakRss = Math.max(peakRss, peakRssBytes(crawlerPid) || 0);
        meters.sample();
        if (r && Number.isNaN(startRss)) startRss = currentRssBytes(crawlerPid);
        // Half way through, RSS is near its peak: ask the profiled crawler for a heap snapshot.
        if (
          profileDir &&
          heapRssBytes === undefined &&
          r &&
          !r.finished_at &&
          r.queried >= count / 2
        ) {
          heapRssBytes = currentRssBytes(crawlerPid);
          process.kill(crawlerPid, "SIGUSR2");
        }
      },
      (line) => log(`crawl ${num(count)}: ${line}`),
    );
    const discovery = windowOf(row, performance.now() - started, meters.read(crawlerPid));
    peakRss = Math.max(peakRss, peakRssBytes(crawlerPid) || 0);
    const discoveryFailedAttempts = failedAttempts;

    let written: Written | null = null;
    let later: SteadyCrawls = NO_LATER_CRAWLS;
    let discoveryClose: CloseWork | null = null;
    if (queues && row?.finished_at) {
      // Its close's shared-names rule and roll-up belong to the discovery crawl, not the steady one.
      discoveryClose = await measureCloseWork(
        queues,
        row.key,
        crawlerPid,
        simPids,
        FINISH_JOB_DEADLINE_MS,
        "discovery",
        (line) => log(`crawl ${num(count)}: ${line}`),
      );
      written = await writtenSoFar(c, sim.specs, sizeBefore);
      later = await crawlSteady(
        {
          c,
          queues,
          sourceName: SOURCE_NAME,
          crawlerPid,
          simPids,
          checkCrawler,
          crawlDeadlineMs: CRAWL_DEADLINE_MS,
          finishJobDeadlineMs: FINISH_JOB_DEADLINE_MS,
          log: (line) => log(`crawl ${num(count)}: ${line}`),
        },
        row,
      );
    }
    await stopChild(proc, 20_000);
    crawler = null;
    const bare = await queryBare(path.join(outDir, `crawl-fleet-${count}.json`), count, log);
    // Without a steady crawl, counted once the crawler has stopped (its close's last work done).
    written ??= await writtenSoFar(c, sim.specs, sizeBefore);

    const behaviours = sim.specs.map((s) => behaviourOf(s));
    const fleetOdd = {
      silent: behaviours.filter((b) => b.silent).length,
      slow: behaviours.filter((b) => b.delayMs > 0).length,
      lossy: behaviours.filter((b) => b.lossRate > 0).length,
    };
    let profile: ProfileSummary | undefined;
    let heap: HeapSummary | undefined;
    if (profileDir) {
      const file = latestProfile(profileDir);
      if (file) profile = summariseProfile(file);
      const snapshot = readdirSync(profileDir).find((f) => f.endsWith(".heapsnapshot"));
      if (snapshot) heap = summariseHeapSnapshot(path.join(profileDir, snapshot));
    }
    return {
      ...discovery,
      servers: count,
      baseline,
      settings,
      simulatorProcesses: processes,
      expectedAnswering: sim.specs.filter(answers).length,
      fleetOdd,
      ...written,
      crawlerPeakRssBytes: peakRss,
      crawlerStartRssBytes: startRss,
      failedAttempts: discoveryFailedAttempts,
      discoveryClose,
      ...later,
      bare,
      ...(profile ? { profile } : {}),
      ...(heap ? { heap, heapRssBytes: heapRssBytes ?? NaN } : {}),
    };
  } finally {
    if (crawler) await stopChild(crawler, 20_000);
    await queues?.close().catch(() => undefined);
    await c.end().catch(() => undefined);
    await master.close();
    await sim.stop();
    await deleteRedisPrefix(redisUrl, prefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

// The crawler's defaults (src/shared/config.ts), which the bench does not change.
const DEFAULTS = loadConfig({});
const WORKER_CONCURRENCY = DEFAULTS.workerConcurrency;
const QUERY_CONCURRENCY = DEFAULTS.queryConcurrency;
export const BATCH_SIZE = DEFAULTS.queryBatchSize;
/** The columns of the crawl tables, discovery, steady and index, up to their own. */
const CRAWL_COLUMNS = ["servers", "wall", "in database", "servers/s", "outcome", "CPU"];
const COST_COLUMN = "CPU per server vs the bare query library";

/** One pass of the bare library over the fleet's first servers. */
interface BarePass {
  servers: number;
  cpuMs: number;
  wallMs: number;
  answered: number;
}

const QUERY_TIMEOUT_MS = 1500;
const QUERY_RETRIES = 1;
/** Warm passes of the bare library after its cold one; the crawls after the discovery take their median. */
const BARE_WARM_PASSES = 3;

/** The pass with the median CPU per server (the lower middle of an even count); null when there is none. */
function medianPass(passes: BarePass[]): BarePass | null {
  const sorted = passes
    .filter((p) => p.servers > 0)
    .sort((a, b) => a.cpuMs / a.servers - b.cpuMs / b.servers);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? null;
}

/**
 * The crawled fleet (still running) queried by the bare library in a process of its own, with the
 * crawler's timeout, re-sends and queries in flight: the same work on the wire without the index.
 */
async function queryBare(
  fleetFile: string,
  count: number,
  log: (line: string) => void,
): Promise<CrawlRun["bare"]> {
  const servers = Math.min(count, BARE_QUERY_SERVERS);
  const sends = QUERY_RETRIES + 1;
  try {
    const { result } = await runChild<ContenderResult>(
      benchScript("query/contender"),
      [
        "--lib",
        "gsindex",
        "--fleet",
        fleetFile,
        "--concurrency",
        String(QUERY_CONCURRENCY),
        "--send-wait-ms",
        String(QUERY_TIMEOUT_MS / sends),
        "--sends",
        String(sends),
        "--limit",
        String(servers),
        // Passes after the first in the same process: the warm figure, for the steady and index crawls, whose
        // crawler is warm too. Three of them, the median taken: one 20,000-server pass read 0.111 to 0.130 ms
        // per server within an hour on a quiet machine (docs/BENCHMARKS-history.md, 2026-11-29), enough to move
        // the index crawl's verdict across its target with the crawl's own cost unchanged.
        "--passes",
        String(BARE_WARM_PASSES),
        // Counted and dropped as they arrive: holding all of its passes' answers (up to 80,000) made the
        // process spend 13-32 % more CPU per server warm, in its garbage collector (docs/BENCHMARKS-history.md,
        // 2026-12-07, "the bare library's held answers"). That was the harness's cost, not the library's;
        // what the crawler spends holding a batch's answers until it writes them is the index's own.
        "--answers",
        "count",
      ],
      // With the node flags the crawler starts with: the ratio is the index's own cost, not two heap setups.
      { raiseFileLimit: true, nodeArgs: serviceNodeArgs() },
    );
    const passOf = (pass: PassResult): BarePass => ({
      servers: pass.servers,
      cpuMs: pass.cpuUserMs + pass.cpuSystemMs,
      wallMs: pass.wallMs,
      answered: pass.answered,
    });
    // The discovery crawl is compared with the first pass, as this comparison has always been measured.
    return { ...passOf(result.cold), warm: medianPass(result.passes.slice(1).map(passOf)) };
  } catch (err) {
    log(`crawl ${num(count)}: the bare query library run failed: ${String(err)}`);
    return null;
  }
}

/**
 * Which of a run's crawls: the discovery of a fresh database, the listing steady crawl after it, or the index
 * crawl after that.
 */
type CrawlKind = "discovery" | "steady" | "index";

function windowFor(r: CrawlRun, kind: CrawlKind): CrawlWindow | null {
  switch (kind) {
    case "discovery":
      return r;
    case "steady":
      return r.steady;
    case "index":
      return r.index;
  }
}

/**
 * The bare library's pass a crawl is compared with: its cold pass for the discovery crawl (a crawler process
 * just started), its warm one for the steady and index crawls (a crawler that has already crawled).
 */
function bareFor(r: CrawlRun, kind: CrawlKind): BarePass | null {
  if (r.bare === null) return null;
  return kind === "discovery" ? r.bare : r.bare.warm;
}

function closeFor(r: CrawlRun, kind: CrawlKind): CloseWork | null {
  switch (kind) {
    case "discovery":
      return r.discoveryClose;
    case "steady":
      return r.steadyClose;
    case "index":
      return r.indexClose;
  }
}

/**
 * Crawler + PostgreSQL CPU per server crawled in one of the run's crawls, as a multiple of the bare library's;
 * `withClose`: the crawl's close counted in, its work after the row closed (close-work.ts), NaN when that was
 * not measured to its end.
 */
function costRatio(r: CrawlRun, kind: CrawlKind, withClose = false): number {
  const w = windowFor(r, kind);
  const bare = bareFor(r, kind);
  if (w === null || bare === null || bare.servers === 0) return NaN;
  let cpuMs = w.crawlerCpuMs + w.postgresCpuMs;
  if (withClose) {
    const close = closeFor(r, kind);
    if (close === null || !close.done) return NaN;
    cpuMs += close.crawlerCpuMs + close.postgresCpuMs;
  }
  return cpuMs / r.servers / (bare.cpuMs / bare.servers);
}

/** A target's measured `ratio`, and the same with the crawl's close counted in when it was measured. */
function ratioMeasured(ratio: number, r: CrawlRun | undefined, kind: CrawlKind): string {
  const withClose = r ? costRatio(r, kind, true) : NaN;
  return `${num(ratio, 2)}x${Number.isFinite(withClose) ? ` (${num(withClose, 2)}x with its close's work after it)` : ""}`;
}

/** The rows of the close's work table: one per crawl of each run whose close was measured. */
function closeRows(runs: CrawlRun[]): string[][] {
  const kinds: Array<[CrawlKind, string]> = [
    ["discovery", "discovery"],
    ["steady", "listing steady crawl"],
    ["index", "index crawl"],
  ];
  return runs.flatMap((r) =>
    kinds.flatMap(([kind, name]) => {
      const close = closeFor(r, kind);
      const w = windowFor(r, kind);
      if (close === null || w === null) return [];
      const perServer = (ms: number): string => `${num(ms / r.servers, 3)} ms`;
      return [
        [
          num(r.servers),
          name,
          close.done ? seconds(close.wallMs, 1) : `not done after ${seconds(close.wallMs, 0)}`,
          `crawler ${seconds(close.crawlerCpuMs, 1)}, PostgreSQL ${seconds(close.postgresCpuMs, 1)}`,
          `crawler ${perServer(close.crawlerCpuMs)} + PostgreSQL ${perServer(close.postgresCpuMs)}, against ${perServer(w.crawlerCpuMs + w.postgresCpuMs)} in the crawl`,
          `${num(costRatio(r, kind), 2)}x -> **${num(costRatio(r, kind, true), 2)}x**`,
        ],
      ];
    }),
  );
}

/** The "CPU per server vs the bare query library" cell of one of the run's crawls. */
function costCell(r: CrawlRun, kind: CrawlKind): string {
  const w = windowFor(r, kind);
  const bare = bareFor(r, kind);
  if (w === null || bare === null) return "not measured";
  const pass =
    kind === "discovery" ? "its first pass" : `the median of its ${BARE_WARM_PASSES} warm passes`;
  return `crawler ${num(w.crawlerCpuMs / r.servers, 3)} + PostgreSQL ${num(w.postgresCpuMs / r.servers, 3)} ms vs bare ${num(bare.cpuMs / bare.servers, 3)} ms (${pass}: ${num(bare.servers)} servers, ${num(bare.answered)} answered): **${num(costRatio(r, kind), 2)}x**`;
}

/** The cells the crawl tables start with after the label: wall, in database, servers/s. */
function timeCells(servers: number, w: CrawlWindow): string[] {
  return [
    w.finished ? `**${seconds(w.wallMs, 1)}**` : `not finished after ${seconds(w.wallMs, 0)}`,
    seconds(w.dbMs, 1),
    `**${num(servers / (w.wallMs / 1000))}**`,
  ];
}

/** The CPU cell of the crawl tables. */
function cpuCell(w: CrawlWindow): string {
  return `crawler ${seconds(w.crawlerCpuMs, 1)}, simulators ${seconds(w.simulatorCpuMs, 1)}, PostgreSQL ${seconds(w.postgresCpuMs, 1)}, Redis ${seconds(w.redisCpuMs, 1)}; machine ${seconds(w.machineCpuMs, 1)} of ${seconds(w.wallMs * 2, 1)}`;
}

/** What limits the crawl, from its own numbers (and the crawler's profile when there is one). */
function limitsOf(r: CrawlRun, profile: ProfileSummary | undefined): string {
  const idle = (profile?.byOrigin.find((o) => o.origin.startsWith("idle"))?.share ?? NaN) * 100;
  const coresMs = 2 * r.wallMs;
  const machineShare = (r.machineCpuMs / coresMs) * 100;
  const perServer = (ms: number): string => `${num(ms / Math.max(1, r.servers), 2)} ms`;
  return (
    `What limits it: queries run ${QUERY_CONCURRENCY} in flight per worker process (QUERY_CONCURRENCY), shared by up to ${WORKER_CONCURRENCY} batch jobs of ${BATCH_SIZE} servers (WORKER_CONCURRENCY); a batch is written when its slowest server is done (silent servers cost the full 1,500 ms timeout, slow ones several seconds), and a job sends its queries when a slot is free, so the jobs past their tails keep the slots busy. ` +
    `The crawler process was busy ${num((r.crawlerCpuMs / r.wallMs) * 100, 0)} % of the wall time (${seconds(r.crawlerCpuMs, 1)} CPU in ${seconds(r.wallMs, 1)})` +
    (Number.isFinite(idle) ? `, its profile ${num(idle, 0)} % idle` : "") +
    `; the machine's two cores were ${num(machineShare, 0)} % busy (${seconds(r.machineCpuMs, 1)} of ${seconds(coresMs, 1)}). ` +
    `Per server crawled, the crawler used ${perServer(r.crawlerCpuMs)} of CPU, PostgreSQL ${perServer(r.postgresCpuMs)} and the simulated fleet itself ${perServer(r.simulatorCpuMs)}: ` +
    `on this machine the fleet, the database and the crawler share two cores, so when they are near saturation the crawl is CPU-bound, and 100,000 servers in 60 s would need the three together to stay under ${num((2 * 60_000) / 100_000, 2)} ms of CPU per server. ` +
    'Against real servers the fleet is elsewhere, and the crawler and PostgreSQL figures are what a crawl costs. Other work on the machine, when there was any, shows in the "machine" CPU.'
  );
}

export async function runCrawlPart(
  options: BenchOptions,
  outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = Date.now();
  const runs: CrawlRun[] = [];
  for (const count of options.crawlFleets) {
    // With a baseline build, the two crawl each fleet one after the other, so both meet the same load.
    for (const baseline of options.crawlBaseline === null
      ? [null]
      : [options.crawlBaseline, null]) {
      // Discovery only for another checkout: its queues and tables may not take this one's start-crawl job.
      const run = await crawlOnce(count, outDir, log, null, {}, baseline, {
        steady: baseline === null,
      });
      log(
        `crawl ${num(count)}${baseline === null ? "" : " (baseline)"}: ${run.finished ? "finished" : "NOT finished"} in ${seconds(run.wallMs)}, ${num(run.answered)} answered, crawler peak RSS ${mib(run.crawlerPeakRssBytes)}${run.steady ? `; steady crawl ${run.steady.finished ? "finished" : "NOT finished"} in ${seconds(run.steady.wallMs)}, ${num(run.steady.queried)} queried` : ""}${run.index ? `; index crawl ${run.index.finished ? "finished" : "NOT finished"} in ${seconds(run.index.wallMs)}, ${num(run.index.queried)} queried` : ""}`,
      );
      runs.push(run);
    }
  }
  if (Object.keys(options.crawlTuned).length > 0) {
    const count = Math.max(...options.crawlFleets);
    const run = await crawlOnce(count, outDir, log, null, options.crawlTuned, null, {
      steady: true,
    });
    log(
      `crawl ${num(count)} tuned: ${run.finished ? "finished" : "NOT finished"} in ${seconds(run.wallMs)}, crawler peak RSS ${mib(run.crawlerPeakRssBytes)}`,
    );
    runs.push(run);
  }
  let profiled: CrawlRun | undefined;
  if (!options.noProfile) {
    const dir = path.join(outDir, "prof-crawl");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const count = Math.min(...options.crawlFleets);
    profiled = await crawlOnce(count, outDir, log, dir);
    log(`crawl ${num(count)} (profiled): ${seconds(profiled.wallMs)}`);
  }
  const label = (r: CrawlRun): string =>
    `${num(r.servers)}${r.baseline === null ? "" : ` (baseline: ${r.baseline})`}${
      Object.keys(r.settings).length > 0
        ? ` (tuned: ${Object.entries(r.settings)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ")})`
        : ""
    }`;
  const rows = runs.map((r) => [
    label(r),
    ...timeCells(r.servers, r),
    `${num(r.answered)} answered, ${num(r.failed)} failed (${num(r.expectedAnswering)} answer in the spec; ${num(r.statesMatching)} states match it); failures: ${r.failures.map((f) => `${f.code} ${num(f.servers)}`).join(", ") || "none"}; UDP receive-buffer drops ${num(r.udpRcvbufErrors)}`,
    cpuCell(r),
    `**${mib(r.crawlerPeakRssBytes)}** (${mib(r.crawlerStartRssBytes)} when the crawl started)`,
    costCell(r, "discovery"),
    `${num(r.rows.game_server ?? 0)} servers, ${num(r.rows.server_sample ?? 0)} samples, ${num(r.rows.server_day ?? 0)} server-days, ${num(r.rows.population_rollup ?? 0)} rollups, ${num((r.rows.crawl_run ?? 0) + (r.rows.crawl_batch ?? 0))} runs+batches`,
    mib(r.bytesWritten),
  ]);
  /** The rows of a crawl after the discovery, on the same crawler; `found` says where its servers came from. */
  const laterRows = (kind: "steady" | "index", found: (w: CrawlWindow) => string) =>
    runs.flatMap((r) => {
      const w = kind === "steady" ? r.steady : r.index;
      if (w === null) return [];
      const names = kind === "steady" ? r.steadyNames : r.indexNames;
      return [
        [
          label(r),
          ...timeCells(r.servers, w),
          `${found(w)}, ${num(w.queried)} queried, ${num(w.answered)} answered, ${num(w.failed)} failed; UDP receive-buffer drops ${num(w.udpRcvbufErrors)}${names ? `; player names changed on ${num(names.changed)} of the ${num(names.withNames)} servers with players` : ""}`,
          cpuCell(w),
          costCell(r, kind),
        ],
      ];
    });
  const steadyRows = laterRows("steady", (w) => `${num(w.listed)} listed`);
  const closes = closeRows(runs);
  const indexRows = laterRows("index", (w) => `${num(w.listed)} from the index (nothing listed)`);
  // Index crawls the scheduler opened by itself before the measured one: none, unless deferIndexTick failed.
  const indexBefore = runs.flatMap((r) =>
    r.steady === null
      ? []
      : [
          r.indexBefore
            ? `${num(r.indexBefore.crawls)} in the ${num(r.servers)}-server run (${num(r.indexBefore.queried)} servers queried)`
            : `one still open at the deadline in the ${num(r.servers)}-server run`,
        ],
  );
  const defaults = runs.filter((r) => Object.keys(r.settings).length === 0 && r.baseline === null);
  const big = defaults.find((r) => r.servers === 100_000) ?? defaults[defaults.length - 1];
  const worstRss = Math.max(...defaults.map((r) => r.crawlerPeakRssBytes));
  const small = defaults.find((r) => r.servers === 10_000);
  const rssGrowth =
    small && big && big.servers === 100_000
      ? big.crawlerPeakRssBytes / small.crawlerPeakRssBytes
      : NaN;
  const ratio = big ? costRatio(big, "discovery") : NaN;
  const steadyRatio = big ? costRatio(big, "steady") : NaN;
  const indexRatio = big ? costRatio(big, "index") : NaN;
  const verdicts: Verdict[] = [
    {
      what: `end-to-end crawl of ${num(big?.servers ?? 0)} servers`,
      target: big?.servers === 100_000 ? "< 60 s" : "< 60 s for 100,000 (not run at that size)",
      measured: big
        ? big.finished
          ? seconds(big.wallMs, 1)
          : `not finished in ${seconds(big.wallMs, 0)}`
        : "n/a",
      met: big && big.servers === 100_000 ? big.finished && big.wallMs < TARGET_100K_MS : null,
      gap: big
        ? big.finished
          ? `${num(big.wallMs / TARGET_100K_MS, 1)}x the target time`
          : "did not finish"
        : "n/a",
    },
    {
      what: "crawler peak RSS",
      target: `<= 400 MB (${mib(TARGET_RSS_BYTES)})`,
      measured: mib(worstRss),
      met: Number.isFinite(worstRss) && worstRss > 0 ? worstRss <= TARGET_RSS_BYTES : null,
      gap: `${mib(worstRss - TARGET_RSS_BYTES)} over`,
    },
    {
      what: "crawler peak RSS at 100,000 servers vs at 10,000",
      target: `<= ${num(TARGET_RSS_GROWTH, 1)}x`,
      measured: Number.isFinite(rssGrowth)
        ? `${num(rssGrowth, 2)}x`
        : "n/a: needs runs of both sizes (`--crawl-fleets 10000,100000`)",
      met: Number.isFinite(rssGrowth) ? rssGrowth <= TARGET_RSS_GROWTH : null,
      gap: `${num(rssGrowth / TARGET_RSS_GROWTH, 2)}x the target`,
    },
    {
      what: `crawler + PostgreSQL CPU per server vs the bare query library's (${num(big?.servers ?? 0)} servers)`,
      target: `<= ${TARGET_COST_RATIO}x`,
      measured: ratioMeasured(ratio, big, "discovery"),
      met: Number.isFinite(ratio) ? ratio <= TARGET_COST_RATIO : null,
      gap: `${num(ratio / TARGET_COST_RATIO, 2)}x the target`,
    },
    {
      what: `crawler + PostgreSQL CPU per server vs the bare query library's in the steady crawl (${num(big?.servers ?? 0)} servers)`,
      target: `<= ${TARGET_COST_RATIO}x`,
      measured: ratioMeasured(steadyRatio, big, "steady"),
      met: Number.isFinite(steadyRatio) ? steadyRatio <= TARGET_COST_RATIO : null,
      gap: `${num(steadyRatio / TARGET_COST_RATIO, 2)}x the target`,
    },
    {
      what: `crawler + PostgreSQL CPU per server vs the bare query library's in the index crawl (${num(big?.servers ?? 0)} servers)`,
      target: `<= ${TARGET_COST_RATIO}x`,
      measured: ratioMeasured(indexRatio, big, "index"),
      met: Number.isFinite(indexRatio) ? indexRatio <= TARGET_COST_RATIO : null,
      gap: `${num(indexRatio / TARGET_COST_RATIO, 2)}x the target`,
    },
  ];
  const markdown = [
    `Each fleet is started fresh: \`gsindex simulate\` with one child process per ${num(SERVERS_PER_PROCESS)} servers (each on its own 127.88.r.x address, r one byte per bench run), the default real-world mix of \`makeFleet\` (challenges, splits, bzip2, 2 % silent, 3 % slow, 3 % lossy, 0.5 % malformed, 10 % without rules) with players' connection times running on and players leaving and joining (\`--player-sessions --player-clock-rate ${PLAYER_CLOCK_RATE}\`: each populated server's player list differs from one crawl to the next, as a real server's does, and its names change as often as at a 5-minute cadence, the fleet's clock running ${PLAYER_CLOCK_RATE}x for crawls about 75 s apart; docs/simulator.md) and its servers' replies encoded as each process starts, before the crawl (docs/simulator.md says why), ` +
      "the simulated Valve master in the bench process (rate limit off, every region 0x00-0x07 and 0xFF listed, as the real crawl does), a fresh migrated database and a fresh Redis key prefix. " +
      `The crawler is the service itself, \`gsindex serve --role scheduler --role worker\` started as the Docker image and \`npm start\` start it (node ${SERVICE_NODE_FLAGS.join(" ")}) with its default settings (${WORKER_CONCURRENCY} query batch jobs at once, batches of ${BATCH_SIZE} servers, ${QUERY_CONCURRENCY} queries in flight per process, 1,500 ms query timeout): its scheduler starts the crawl at once. ` +
      'Wall time runs from spawning the crawler to the crawl row being closed (every listing run and query batch written, states and samples committed); "in database" is the crawl row\'s own started_at to finished_at.',
    "",
    "Discovery crawl (a fresh database: every server new, the crawler process starting included):",
    "",
    table(
      [...CRAWL_COLUMNS, "crawler peak RSS", COST_COLUMN, "rows written", "bytes written"],
      rows,
    ),
    "",
    "Steady crawl (every server known): once the discovery crawl has closed and its close's work (the shared-names rule, the roll-up) is done, the same crawler process crawls the same source again, started by enqueuing a start-crawl job as the API's triggerCrawl does. The bench's master source has `options.query: true`, so this crawl lists the master and queries every server again, as every crawl did with QUERY_FROM_INDEX off. Measured like the discovery: wall time from the start-crawl job to the crawl row being closed, the same CPU meters, and the ratio against the same bare-library run:",
    "",
    steadyRows.length > 0 ? table([...CRAWL_COLUMNS, COST_COLUMN], steadyRows) : "Not run.",
    "",
    `Index crawl (every known server queried, nothing listed): the steady state of a default deployment, since QUERY_FROM_INDEX=1 is the default. There the built-in \`index\` source re-queries every known server each QUERY_INTERVAL_MS, its servers planned in SQL from game_server without any listing, while the master's crawls only list (and query the servers never queried yet); so this, not the listing steady crawl, is the per-server work a default index repeats for months. The runs with steady crawls start the crawler with QUERY_FROM_INDEX=1 and QUERY_INTERVAL_MS=3,600,000 (the master's \`query: true\` keeps the two crawls above as they were); once the steady crawl has closed and its finish job is done, the same crawler crawls the \`index\` source, started by a start-crawl job, measured like the steady crawl and against the same warm bare-library pass:`,
    "",
    indexRows.length > 0 ? table([...CRAWL_COLUMNS, COST_COLUMN], indexRows) : "Not run.",
    "",
    `The index source's job scheduler would run its first tick as the crawler starts (BullMQ runs an \`every\` scheduler's first job at once) and open an index crawl beside the discovery, which in a trial run of 2,000 servers planned the 1,566 the master's first listings had already written and queried them during the discovery; so the bench makes the index source and its job scheduler before the crawler starts, with the first tick an interval (an hour) later, and the crawler's scheduler keeps them as they are. Index crawls the scheduler opened by itself before the measured one: ${indexBefore.join("; ") || "no run"}.`,
    "",
    "The close's work after each crawl, in none of the figures above. Once a crawl's row is closed, its finish job runs the shared-names rule and rolls the hours of the crawl up into server_day and population_rollup, each roll-up reading every sample of its hour so far; the next crawl waits for it. Measured from the row closed to the finish job done, with the same meters, and added to the crawl's own CPU in the last column (the targets below are stated on the crawl alone, with this beside them):",
    "",
    closes.length > 0
      ? table(
          [
            "servers",
            "after",
            "wall",
            "CPU",
            "per server crawled",
            `${COST_COLUMN}, without and with it`,
          ],
          closes,
        )
      : "Not measured.",
    "",
    ...verdicts.map(
      (v) =>
        `Target: ${v.what} ${v.target}: **${v.measured}**, ${v.met === null ? "not measured" : v.met ? "met" : "missed"}.`,
    ),
    "",
    ...(big ? [limitsOf(big, profiled?.profile)] : []),
    "",
    `The bare query library's column: after the crawl, with the fleet still up, \`queryServer\` of src/protocol (what the crawler calls for each server) queries the first ${num(BARE_QUERY_SERVERS)} servers of the same fleet in a process of its own started with the crawler's node flags (${SERVICE_NODE_FLAGS.join(" ")}, src/service/node-flags.ts), with the crawler's timeout (${num(QUERY_TIMEOUT_MS)} ms per part), re-sends (${QUERY_RETRIES}) and ${num(QUERY_CONCURRENCY)} queries in flight, and no database, ${BARE_WARM_PASSES + 1} times in that process, each answer counted as answered or not and dropped as it arrives (holding every pass's answers made the process's garbage collector a cost of its own, not the library's): the discovery crawl is compared with its first pass (cold: the JIT compiling as it goes, as in a crawler just started), the steady and index crawls with the median of the ${BARE_WARM_PASSES} after it by CPU per server (warm, as the crawler is by then; one pass alone varied by up to 17 % within an hour); the ratio is (crawler + PostgreSQL CPU) per server crawled over its CPU per server.`,
    "",
    'CPU columns are CPU seconds used during the crawl: the crawler process, the simulator processes (which answer every query), every PostgreSQL process on the machine and Redis; "machine" is all busy CPU of both cores (other work on the shared machine included), against the 2 x wall seconds the cores had.',
    ...(profiled?.heap
      ? [
          "",
          `Why the crawler's RSS grows with the fleet (${mib(defaults[0]?.crawlerPeakRssBytes ?? NaN)} at ${num(defaults[0]?.servers ?? 0)} servers, ${mib(big?.crawlerPeakRssBytes ?? NaN)} at ${num(big?.servers ?? 0)}, about ${mib(defaults[0]?.crawlerStartRssBytes ?? NaN)} before it queries anything):`,
          "",
          heapMarkdown(
            profiled.heap,
            profiled.heapRssBytes ?? NaN,
            `the crawler half way through the profiled ${num(profiled.servers)}-server crawl`,
          ),
        ]
      : []),
    ...(profiled?.profile
      ? [
          "",
          profileMarkdown(
            profiled.profile,
            `the crawler during a separate ${num(profiled.servers)}-server crawl (node --cpu-prof on gsindex serve; ${seconds(profiled.wallMs, 1)} with the profiler on)`,
          ),
        ]
      : []),
  ].join("\n");
  return {
    id: "crawl",
    title: "End-to-end crawl",
    markdown,
    commands: [`npm run bench -- --only crawl --crawl-fleets ${options.crawlFleets.join(",")}`],
    verdicts,
    data: { runs, profiled },
    wallMs: Date.now() - started,
  };
}
