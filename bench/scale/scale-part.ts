/**
 * Part 'scale', scale-out shown: the same simulated fleet crawled by 1, 2 and 4 worker processes
 * (`gsindex serve --role worker`) sharing one Redis and one PostgreSQL, with one scheduler process
 * (`gsindex serve --role scheduler`) that owns the source. Each worker count gets a fresh database and
 * Redis prefix and crawls twice: the first crawl discovers the fleet (inserts every server, and its
 * CPU includes the processes starting), the second is the steady state a 5-minute cadence repeats
 * (every server known), and is the one the per-server costs come from.
 *
 * What shows that nothing is done twice: per crawl, the samples per server (SQL: must be exactly 1,
 * one per listed server), the crawl's own counters (queried = listed), every batch closed once, and the
 * datagrams the simulated servers received per server (counted in the fleet processes, so a batch
 * queried twice shows there even though the database's keys keep it from being written twice).
 */
import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import IORedis from "ioredis";
import type { BenchOptions } from "../lib/args";
import { connect, createBenchDb } from "../lib/bench-db";
import { crawlerEnv } from "../lib/crawler-env";
import { triggerSourceCrawl, type Query } from "../lib/source-crawl";
import {
  benchScript,
  RUN_OCTET,
  spawnNode,
  spawnService,
  stopChild,
  waitForLine,
} from "../lib/child";
import {
  CpuMeter,
  cpuMsByName,
  cpuMsOf,
  machineBusyMs,
  peakRssBytes,
  treePids,
} from "../lib/procs";
import { mib, num, seconds, table, type PartResult } from "../lib/report";
import { deleteRedisPrefix } from "../../src/shared/redis-prefix";
import { createCrawlQueues } from "../../src/crawler/queues";
import { fleetLayout, layoutSpecs, type FleetLayout } from "../../src/simulator/fleet-processes";
import type { FleetStats } from "../../src/simulator/fleet";
import { REAL_MASTER_RATE_LIMIT, startSimValveMaster } from "../../src/simulator/master";
import { behaviourOf } from "../../src/simulator/make-fleet";
import {
  DEFAULT_MASTER_REQUESTS_PER_MINUTE,
  MASTER_ADDRESSES_PER_PACKET,
} from "../../src/protocol";

const SERVERS_PER_PROCESS = 10_000;
const CRAWL_DEADLINE_MS = 10 * 60_000;
const SOURCE_NAME = "scale-master";
// The crawler's defaults (src/shared/config.ts) for one process, divided between the workers.
const QUERY_CONCURRENCY = 800;
const WORKER_CONCURRENCY = 32;

/**
 * One worker's share of the one-worker concurrency. The workers share the bench's two cores with the
 * fleet and PostgreSQL: each with the full default (800 queries in flight) multiplied the load, the
 * fleet's replies came late, and a 4-worker crawl timed out on a third of its servers, which measures
 * an overloaded machine rather than how the work divides. On machines of their own, workers keep the
 * defaults.
 */
function shareOf(workers: number): { queryConcurrency: number; workerConcurrency: number } {
  return {
    queryConcurrency: Math.ceil(QUERY_CONCURRENCY / workers),
    workerConcurrency: Math.max(1, Math.ceil(WORKER_CONCURRENCY / workers)),
  };
}

/** What one crawl cost and did, measured from its start to its crawl row being closed. */
export interface ScaleCrawl {
  workers: number;
  /** 1 = discovery (fresh database, processes starting), 2 = steady state (every server known). */
  crawl: number;
  finished: boolean;
  wallMs: number;
  dbMs: number;
  listed: number;
  queried: number;
  answered: number;
  failed: number;
  written: number;
  /** CPU ms of each worker process during the crawl (one entry per worker). */
  workerCpuMs: number[];
  schedulerCpuMs: number;
  /** PostgreSQL backends connected to the bench database (the bench's own connection left out). */
  pgBackendCpuMs: number;
  /** Every postgres process of the machine: the bench database's backends plus WAL writer, checkpointer, other sessions' work. */
  pgAllCpuMs: number;
  /** The machine's one redis-server (shared with other work on the machine). */
  redisCpuMs: number;
  simulatorCpuMs: number;
  machineCpuMs: number;
  /** Datagrams the simulated servers received during the crawl, and sent back. */
  simRequests: number;
  simReplies: number;
  /** SQL checks: samples of this crawl, the most any server got, listed servers with none. */
  samples: number;
  maxSamplesPerServer: number;
  serversWithoutSample: number;
  batches: number;
  batchesOpen: number;
  /** The crawl's query-batch jobs in BullMQ, the times they were started in all (1 each when none ran twice), and stalls. */
  batchJobs: number;
  batchJobStarts: number;
  batchJobsStalled: number;
  /** pg_stat_database of the bench database over the crawl (the bench's own queries taken out): transactions committed, rows written. */
  xactCommit: number;
  rowsInserted: number;
  rowsUpdated: number;
  /** WAL the cluster wrote over the crawl (with the statistics waits): an upper bound, other sessions' writes included. */
  walBytes: number;
  /** Per table (partitions under their parent): rows inserted, updated (of which HOT), deleted. */
  tableWrites: TableWrites[];
  /** Bytes of every key under the run's Redis prefix (MEMORY USAGE): the largest seen, and at the end. */
  redisPeakBytes: number;
  redisEndBytes: number;
  workerPeakRssBytes: number[];
  /** Each query-batch job started more than once: its id, attempts ended (failed or completed: BullMQ attemptsMade), stalls and last failure. */
  restartedJobs: string[];
  /** What the gsindex processes logged during the crawl (they run at LOG_LEVEL warn): distinct messages, with counts. */
  processWarnings: string[];
}

const MAX_LOG_LINES = 500;

/** A pino JSON line as "message (err)", or the line itself when it is not one. */
function logSummary(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: unknown; err?: unknown };
    const err =
      typeof entry.err === "string"
        ? entry.err
        : ((entry.err as { message?: unknown } | undefined)?.message ?? undefined);
    return `${String(entry.msg ?? "")}${err !== undefined ? ` (${String(err)})` : ""}`;
  } catch {
    return line.slice(0, 300);
  }
}

/** Distinct lines, each with how often it came, in the order they first came. */
function countDistinct(lines: string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  return [...counts].map(([line, n]) => (n > 1 ? `${n} x ${line}` : line));
}

export interface TableWrites {
  table: string;
  ins: number;
  upd: number;
  hot: number;
  del: number;
}

export interface ScaleRun {
  workers: number;
  /** CPU ms per second of one idle worker (between crawls, averaged over the workers). */
  workerIdleCpuMsPerSecond: number;
  crawls: ScaleCrawl[];
  /** pg_total_relation_size(server_sample) after both crawls, and the samples in it. */
  sampleTableBytes: number;
  sampleRows: number;
  loadBefore: number[];
  loadAfter: number[];
  error?: string;
}

function loadAverage(): number[] {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).map(Number);
}

/** The fleet in child processes of sim-child.ts, which answer "stats" on stdin. */
interface SimFleet {
  specs: ReturnType<typeof layoutSpecs>;
  children: ChildProcess[];
  stats(): Promise<FleetStats>;
  stop(): Promise<void>;
}

async function startFleetChildren(layout: FleetLayout): Promise<SimFleet> {
  const children: ChildProcess[] = [];
  const perChild: Array<Array<(s: FleetStats) => void>> = [];
  try {
    for (let slice = 0; slice < layout.processes; slice++) {
      const child = spawnNode(
        benchScript("scale/sim-child"),
        [JSON.stringify(layout), String(slice)],
        { raiseFileLimit: true },
      );
      children.push(child);
      const waiting: Array<(s: FleetStats) => void> = [];
      perChild.push(waiting);
      await waitForLine(child, (line) => line.startsWith('{"ready"'), 5 * 60_000);
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
        if (line.startsWith('{"stats"'))
          waiting.shift()?.((JSON.parse(line) as { stats: FleetStats }).stats);
      });
    }
  } catch (err) {
    await Promise.all(children.map((c) => stopChild(c)));
    throw err;
  }
  return {
    specs: layoutSpecs(layout),
    children,
    async stats() {
      const all = await Promise.all(
        children.map(
          (child, i) =>
            new Promise<FleetStats>((resolve, reject) => {
              const timer = setTimeout(
                () => reject(new Error(`simulator process ${i} did not report its stats`)),
                30_000,
              );
              perChild[i]?.push((s) => {
                clearTimeout(timer);
                resolve(s);
              });
              child.stdin?.write("stats\n");
            }),
        ),
      );
      return all.reduce((t, s) => ({
        requests: t.requests + s.requests,
        replies: t.replies + s.replies,
        challenges: t.challenges + s.challenges,
        garbage: t.garbage + s.garbage,
        datagramsDropped: t.datagramsDropped + s.datagramsDropped,
      }));
    },
    async stop() {
      for (const child of children) child.stdin?.end();
      await Promise.all(children.map((c) => stopChild(c, 15_000)));
    },
  };
}

/** Bytes of every key under `prefix:` (SCAN + MEMORY USAGE; never KEYS on the shared Redis). */
async function prefixBytes(redis: IORedis, prefix: string): Promise<number> {
  let cursor = "0";
  let total = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    for (const key of keys)
      total += Number((await redis.call("MEMORY", "USAGE", key, "SAMPLES", "0")) ?? 0);
  } while (cursor !== "0");
  return total;
}

interface DbStat {
  xact: number;
  ins: number;
  upd: number;
  /** pg_current_wal_lsn as bytes: the cluster's WAL, other databases' writes included. */
  wal: number;
}

/** PostgreSQL 15 backends flush their statistics when idle at most every 10 s (PGSTAT_IDLE_INTERVAL). */
const STATS_FLUSH_MS = 11_000;

async function dbStat(q: Query): Promise<DbStat> {
  await new Promise((r) => setTimeout(r, STATS_FLUSH_MS));
  await q("SELECT pg_stat_clear_snapshot()");
  const r = (
    await q<{ x: string; i: string; u: string; w: string }>(
      "SELECT xact_commit::text AS x, tup_inserted::text AS i, tup_updated::text AS u, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS w FROM pg_stat_database WHERE datname = current_database()",
    )
  ).rows[0];
  return {
    xact: Number(r?.x ?? 0),
    ins: Number(r?.i ?? 0),
    upd: Number(r?.u ?? 0),
    wal: Number(r?.w ?? NaN),
  };
}

/** Rows written per table so far; a partition counts under its parent (pg_inherits), TOAST under its table. */
async function tableStats(q: Query): Promise<TableWrites[]> {
  // TOAST tables (large jsonb values stored out of line) count under their table's name + " TOAST".
  const r = await q<{ t: string; i: string; u: string; h: string; d: string }>(
    `SELECT COALESCE(p.relname, o.relname || ' TOAST', s.relname) AS t, sum(s.n_tup_ins)::text AS i, sum(s.n_tup_upd)::text AS u, sum(s.n_tup_hot_upd)::text AS h, sum(s.n_tup_del)::text AS d
       FROM pg_stat_all_tables s LEFT JOIN pg_inherits ih ON ih.inhrelid = s.relid LEFT JOIN pg_class p ON p.oid = ih.inhparent
       LEFT JOIN pg_class o ON o.reltoastrelid = s.relid
      WHERE s.schemaname IN ('public', 'pg_toast') GROUP BY 1`,
  );
  return r.rows.map((x) => ({
    table: x.t,
    ins: Number(x.i),
    upd: Number(x.u),
    hot: Number(x.h),
    del: Number(x.d),
  }));
}

function diffTables(before: TableWrites[], after: TableWrites[]): TableWrites[] {
  return after
    .map((a) => {
      const b = before.find((x) => x.table === a.table);
      return {
        table: a.table,
        ins: a.ins - (b?.ins ?? 0),
        upd: a.upd - (b?.upd ?? 0),
        hot: a.hot - (b?.hot ?? 0),
        del: a.del - (b?.del ?? 0),
      };
    })
    .filter((t) => t.ins + t.upd + t.del > 0)
    .sort((x, y) => y.ins + y.upd + y.del - (x.ins + x.upd + x.del));
}

interface CrawlRow {
  id: string;
  started_at: Date;
  finished_at: Date | null;
  listed: number;
  queried: number;
  answered: number;
  failed: number;
  written: number;
}

async function runWorkers(
  workers: number,
  fleet: SimFleet,
  masterAddress: { host: string; port: number },
  log: (line: string) => void,
): Promise<ScaleRun> {
  const db = await createBenchDb("scale");
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `gsscale${process.pid}w${workers}`;
  const c = await connect(db.url);
  let ownQueries = 0;
  const q: Query = (sql, params = []) => {
    ownQueries += 1;
    return c.query(sql, params);
  };
  const ownPid = Number((await c.query<{ p: number }>("SELECT pg_backend_pid() AS p")).rows[0]?.p);
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
  const children: ChildProcess[] = [];
  const stderrTails = new Map<ChildProcess, string>();
  // The processes' log lines (warnings and errors only, at the bench's LOG_LEVEL) since the crawl began:
  // a job started twice or a crawl that fails says why here. Bounded: a flood keeps its first lines.
  const logLines: string[] = [];
  const queues = createCrawlQueues({ redisUrl, prefix, jobAttempts: 3, jobBackoffMs: 1000 });
  const run: ScaleRun = {
    workers,
    workerIdleCpuMsPerSecond: NaN,
    crawls: [],
    sampleTableBytes: NaN,
    sampleRows: 0,
    loadBefore: loadAverage(),
    loadAfter: [],
  };
  try {
    const env = crawlerEnv(
      {
        databaseUrl: db.url,
        redisUrl,
        prefix,
        master: {
          name: SOURCE_NAME,
          host: masterAddress.host,
          port: masterAddress.port,
          intervalMs: 3_600_000,
          options: { requestsPerMinute: 0 },
        },
      },
      {
        CRAWL_INTERVAL_MS: "3600000",
        QUERY_CONCURRENCY: String(shareOf(workers).queryConcurrency),
        WORKER_CONCURRENCY: String(shareOf(workers).workerConcurrency),
      },
    );
    const spawnRole = (role: string): ChildProcess => {
      const child = spawnService(["serve", "--role", role], { env, raiseFileLimit: true });
      child.stdout?.resume();
      // gsindex logs to stderr (src/shared/logger.ts).
      stderrTails.set(child, "");
      createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => {
        stderrTails.set(child, `${stderrTails.get(child) ?? ""}${line}\n`.slice(-3000));
        if (logLines.length < MAX_LOG_LINES) logLines.push(`${role}: ${logSummary(line)}`);
      });
      children.push(child);
      return child;
    };
    const workerProcs = Array.from({ length: workers }, () => spawnRole("worker"));
    let scheduler: ChildProcess | null = null;
    const pids = (): number[] => workerProcs.map((w) => w.pid as number);

    let backendPids: number[] = [];
    const refreshBackends = async (): Promise<void> => {
      backendPids = (
        await q<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> $1",
          [ownPid],
        )
      ).rows.map((r) => r.pid);
    };
    const simPids = fleet.children.map((ch) => ch.pid as number);

    for (const crawlNo of [1, 2]) {
      // Before the baselines: the wait for the statistics also shows what the workers cost when idle.
      const idleStart = pids().map((p) => cpuMsOf(treePids(p)));
      const idleStarted = performance.now();
      const statBefore = await dbStat(q);
      const tablesBefore = await tableStats(q);
      run.workerIdleCpuMsPerSecond =
        crawlNo === 2
          ? pids().reduce((sum, p, i) => sum + cpuMsOf(treePids(p)) - (idleStart[i] ?? 0), 0) /
            workers /
            ((performance.now() - idleStarted) / 1000)
          : NaN;
      await refreshBackends();
      const lastId =
        (await q<{ id: string | null }>("SELECT max(id)::text AS id FROM crawl")).rows[0]?.id ??
        null;
      const workerBefore = pids().map((p) => cpuMsOf(treePids(p)));
      const schedulerBefore = scheduler ? cpuMsOf([scheduler.pid as number]) : 0;
      const pgBackends = new CpuMeter(() => backendPids);
      const pgAll = new CpuMeter(() => cpuMsByName("postgres").pids);
      const redisMeter = new CpuMeter(() => cpuMsByName("redis-server").pids);
      const simBefore = cpuMsOf(simPids);
      const machineBefore = machineBusyMs();
      const ownBefore = ownQueries;
      const fleetBefore = await fleet.stats();
      logLines.length = 0;
      log(`scale ${workers} worker(s), crawl ${crawlNo}: start`);
      const started = performance.now();
      if (crawlNo === 1) {
        // The scheduler upserts the source and starts its first crawl at once.
        scheduler = spawnRole("scheduler");
      } else {
        await triggerSourceCrawl(queues, q, SOURCE_NAME);
      }
      let row: CrawlRow | undefined;
      let redisPeak = 0;
      let lastRedis = 0;
      let lastLog = performance.now();
      while (performance.now() - started < CRAWL_DEADLINE_MS) {
        await new Promise((r) => setTimeout(r, 250));
        for (const child of children)
          if (child.exitCode !== null)
            throw new Error(
              `a gsindex process exited (${child.exitCode}): ${stderrTails.get(child) ?? ""}`,
            );
        await refreshBackends();
        pgBackends.sample();
        pgAll.sample();
        if (performance.now() - lastRedis > 1000) {
          lastRedis = performance.now();
          redisPeak = Math.max(redisPeak, await prefixBytes(redis, prefix));
        }
        row = (
          await q<CrawlRow>(
            "SELECT id::text, started_at, finished_at, listed, queried, answered, failed, written FROM crawl WHERE id > $1 ORDER BY id LIMIT 1",
            [lastId ?? "0"],
          )
        ).rows[0];
        if (row?.finished_at) break;
        if (performance.now() - lastLog > 10_000) {
          lastLog = performance.now();
          log(
            `scale ${workers} worker(s), crawl ${crawlNo}: ${row ? `listed ${row.listed}, queried ${row.queried}` : "no crawl yet"} after ${seconds(performance.now() - started, 0)}`,
          );
        }
      }
      const wallMs = performance.now() - started;
      const workerCpuMs = pids().map((p, i) => cpuMsOf(treePids(p)) - (workerBefore[i] ?? 0));
      const schedulerCpuMs = scheduler ? cpuMsOf([scheduler.pid as number]) - schedulerBefore : 0;
      const pgBackendCpuMs = pgBackends.usedMs();
      const pgAllCpuMs = pgAll.usedMs();
      const redisCpuMs = redisMeter.usedMs();
      const simulatorCpuMs = cpuMsOf(simPids) - simBefore;
      const machineCpuMs = machineBusyMs() - machineBefore;
      const fleetAfter = await fleet.stats();
      const redisEnd = await prefixBytes(redis, prefix);
      const statAfter = await dbStat(q);
      const ownDuring = ownQueries - ownBefore;
      const tablesAfter = await tableStats(q);
      const crawlKey = (
        await q<{ key: string }>("SELECT key FROM crawl WHERE id = $1", [row?.id ?? "0"])
      ).rows[0]?.key;
      const jobs = (
        await queues.query.getJobs(["completed", "failed", "active", "waiting", "delayed"], 0, -1)
      ).filter((j) => (j.data as { crawlKey?: string } | undefined)?.crawlKey === crawlKey);
      if (!row) throw new Error(`no crawl started within ${seconds(CRAWL_DEADLINE_MS, 0)}`);
      const one = async (sql: string, params: unknown[]): Promise<number> =>
        Number(Object.values((await q(sql, params)).rows[0] ?? {})[0] ?? 0);
      const crawl: ScaleCrawl = {
        workers,
        crawl: crawlNo,
        finished: row.finished_at !== null,
        wallMs,
        dbMs: row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : NaN,
        listed: row.listed,
        queried: row.queried,
        answered: row.answered,
        failed: row.failed,
        written: row.written,
        workerCpuMs,
        schedulerCpuMs,
        pgBackendCpuMs,
        pgAllCpuMs,
        redisCpuMs,
        simulatorCpuMs,
        machineCpuMs,
        simRequests: fleetAfter.requests - fleetBefore.requests,
        simReplies: fleetAfter.replies - fleetBefore.replies,
        samples: await one(
          "SELECT count(*)::int FROM server_sample_range('-infinity', 'infinity') WHERE crawl_id = $1",
          [row.id],
        ),
        maxSamplesPerServer: await one(
          "SELECT COALESCE(max(n), 0)::int FROM (SELECT count(*) AS n FROM server_sample_range('-infinity', 'infinity') WHERE crawl_id = $1 GROUP BY game_server_id) s",
          [row.id],
        ),
        serversWithoutSample: await one(
          "SELECT count(*)::int FROM (SELECT DISTINCT unnest(server_ids) AS id FROM crawl_batch WHERE crawl_id = $1) b WHERE NOT EXISTS (SELECT 1 FROM server_sample_range('-infinity', 'infinity') s WHERE s.crawl_id = $1 AND s.game_server_id = b.id)",
          [row.id],
        ),
        batches: await one("SELECT count(*)::int FROM crawl_batch WHERE crawl_id = $1", [row.id]),
        batchesOpen: await one(
          "SELECT count(*)::int FROM crawl_batch WHERE crawl_id = $1 AND done_at IS NULL",
          [row.id],
        ),
        batchJobs: jobs.length,
        batchJobStarts: jobs.reduce((sum, j) => sum + (j.attemptsStarted ?? 0), 0),
        batchJobsStalled: jobs.reduce((sum, j) => sum + (j.stalledCounter ?? 0), 0),
        xactCommit: statAfter.xact - statBefore.xact - ownDuring,
        tableWrites: diffTables(tablesBefore, tablesAfter),
        walBytes: statAfter.wal - statBefore.wal,
        rowsInserted: statAfter.ins - statBefore.ins,
        rowsUpdated: statAfter.upd - statBefore.upd,
        redisPeakBytes: Math.max(redisPeak, redisEnd),
        redisEndBytes: redisEnd,
        workerPeakRssBytes: pids().map((p) => peakRssBytes(p)),
        restartedJobs: jobs
          .filter((j) => (j.attemptsStarted ?? 0) > 1)
          .map(
            (j) =>
              `${j.id ?? "?"} started ${j.attemptsStarted} times, ${j.attemptsMade} attempt(s) ended, ${j.stalledCounter} stall(s)${j.failedReason ? `, last failure: ${j.failedReason}` : ""}`,
          ),
        processWarnings: countDistinct(logLines),
      };
      run.crawls.push(crawl);
      log(
        `scale ${workers} worker(s), crawl ${crawlNo}: ${crawl.finished ? "finished" : "NOT finished"} in ${seconds(wallMs)}, ${num(crawl.queried)} queried, workers ${crawl.workerCpuMs.map((ms) => seconds(ms, 1)).join(" + ")}, PostgreSQL backends ${seconds(pgBackendCpuMs, 1)}, Redis ${seconds(redisCpuMs, 1)}, ${num(crawl.simRequests / Math.max(1, crawl.listed), 2)} datagrams per server`,
      );
      if (!crawl.finished) break;
    }
    // server_sample is partitioned: its size is the sum of its partitions'.
    run.sampleTableBytes = Number(
      (
        await c.query<{ b: string }>(
          "SELECT sum(pg_total_relation_size(relid))::text AS b FROM pg_partition_tree('server_sample')",
        )
      ).rows[0]?.b ?? NaN,
    );
    run.sampleRows = Number(
      (await c.query<{ n: string }>("SELECT count(*)::text AS n FROM server_sample")).rows[0]?.n ??
        0,
    );
  } catch (err) {
    run.error = err instanceof Error ? err.message : String(err);
    log(`scale ${workers} worker(s) failed: ${run.error}`);
  } finally {
    await Promise.all(children.map((ch) => stopChild(ch, 20_000)));
    await queues.close().catch(() => undefined);
    redis.disconnect();
    await c.end().catch(() => undefined);
    await deleteRedisPrefix(redisUrl, prefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
    run.loadAfter = loadAverage();
  }
  return run;
}

/** Servers the paced-listing runs list (a part of the fleet: at the real rate the listing is slow). */
const PACED_LISTING_SERVERS = 5000;
const PACED_LISTING_DEADLINE_MS = 6 * 60_000;

/** One crawl's listing against the simulated master with its real rate limit and the crawler's default pacing. */
export interface PacedListing {
  regions: string;
  servers: number;
  /** From the crawl's start to its last listing run closed. */
  wallMs: number;
  finished: boolean;
  runs: number;
  runsPartial: number;
  found: number;
  /** Distinct servers listed (game_server rows). */
  distinct: number;
  masterRequests: number;
  masterAnswered: number;
  masterRateLimited: number;
  errors: string[];
}

/** Lists part of the fleet (no queries measured) through one worker, as the crawl does, at the real rate. */
async function pacedListing(
  fleet: SimFleet,
  regions: number[],
  log: (line: string) => void,
): Promise<PacedListing> {
  const specs = fleet.specs.slice(0, PACED_LISTING_SERVERS);
  const master = await startSimValveMaster({
    fleet: specs,
    rateLimit: REAL_MASTER_RATE_LIMIT,
    host: "127.0.0.1",
    port: 0,
  });
  const db = await createBenchDb("scalelist");
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `gsscale${process.pid}list${regions.length}`;
  const c = await connect(db.url);
  const children: ChildProcess[] = [];
  const label =
    regions.length === 0
      ? "every region (0x00-0x07 and 0xFF), as the crawl does"
      : `region ${regions.map((r) => `0x${r.toString(16).toUpperCase()}`).join(", ")} only`;
  const result: PacedListing = {
    regions: label,
    servers: specs.length,
    wallMs: NaN,
    finished: false,
    runs: 0,
    runsPartial: 0,
    found: 0,
    distinct: 0,
    masterRequests: 0,
    masterAnswered: 0,
    masterRateLimited: 0,
    errors: [],
  };
  try {
    const env = crawlerEnv(
      {
        databaseUrl: db.url,
        redisUrl,
        prefix,
        // No requestsPerMinute: the crawler's default pacing.
        master: {
          name: SOURCE_NAME,
          host: master.address.host,
          port: master.address.port,
          intervalMs: 3_600_000,
          regions,
        },
        logLevel: "error",
      },
      { CRAWL_INTERVAL_MS: "3600000" },
    );
    for (const role of ["worker", "scheduler"]) {
      const child = spawnService(["serve", "--role", role], { env, raiseFileLimit: true });
      child.stdout?.resume();
      child.stderr?.resume();
      children.push(child);
    }
    log(`scale paced listing, ${label}: ${num(specs.length)} servers`);
    const started = performance.now();
    let crawlStart: Date | null = null;
    while (performance.now() - started < PACED_LISTING_DEADLINE_MS) {
      await new Promise((r) => setTimeout(r, 1000));
      const row = (
        await c.query<{ started_at: Date; runs: number; open: number; last: Date | null }>(
          "SELECT c.started_at, count(r.id)::int AS runs, count(r.id) FILTER (WHERE r.finished_at IS NULL)::int AS open, max(r.finished_at) AS last FROM crawl c LEFT JOIN crawl_run r ON r.crawl_id = c.id GROUP BY c.id ORDER BY c.id LIMIT 1",
        )
      ).rows[0];
      if (!row) continue;
      crawlStart = row.started_at;
      if (row.runs > 0 && row.open === 0 && row.last) {
        result.finished = true;
        result.wallMs = row.last.getTime() - row.started_at.getTime();
        break;
      }
    }
    if (!result.finished) result.wallMs = crawlStart ? Date.now() - crawlStart.getTime() : NaN;
    const runs = (
      await c.query<{ found: number; partial: boolean; error: string | null }>(
        "SELECT found, partial, error FROM crawl_run",
      )
    ).rows;
    result.runs = runs.length;
    result.runsPartial = runs.filter((r) => r.partial).length;
    result.found = runs.reduce((sum, r) => sum + r.found, 0);
    result.errors = [
      ...new Set(runs.map((r) => r.error).filter((e): e is string => e !== null)),
    ].slice(0, 3);
    result.distinct = Number(
      (await c.query<{ n: string }>("SELECT count(*)::text AS n FROM game_server")).rows[0]?.n ?? 0,
    );
    result.masterRequests = master.stats.requests;
    result.masterAnswered = master.stats.answered;
    result.masterRateLimited = master.stats.rateLimited;
    log(
      `scale paced listing, ${label}: ${result.finished ? "listed" : "NOT listed"} in ${seconds(result.wallMs, 0)}, ${result.runsPartial} of ${result.runs} runs partial, master ${result.masterRequests} requests, ${result.masterRateLimited} refused`,
    );
  } finally {
    await Promise.all(children.map((ch) => stopChild(ch, 20_000)));
    await c.end().catch(() => undefined);
    await master.close();
    await deleteRedisPrefix(redisUrl, prefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
  return result;
}

const perServer = (ms: number, servers: number): string =>
  `${num(ms / Math.max(1, servers), 3)} ms`;

export async function runScalePart(
  options: BenchOptions,
  outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = Date.now();
  const count = options.scaleServers;
  const processes = Math.max(1, Math.ceil(count / SERVERS_PER_PROCESS));
  const hosts = Array.from({ length: processes }, (_v, i) => `127.89.${RUN_OCTET}.${i + 1}`);
  // Players' connection times run on, as the crawl part's do (bench/crawl/crawl-part.ts says why).
  const layout = fleetLayout({
    count,
    processes,
    hosts,
    basePort: 20000,
    seed: 1,
    playerClock: true,
  });
  log(`scale: starting ${num(count)} simulated servers in ${processes} process(es)`);
  const fleet = await startFleetChildren(layout);
  const master = await startSimValveMaster({
    fleet: fleet.specs,
    rateLimit: false,
    host: "127.0.0.1",
    port: 0,
  });
  const runs: ScaleRun[] = [];
  const paced: PacedListing[] = [];
  try {
    for (const workers of options.scaleWorkers)
      runs.push(await runWorkers(workers, fleet, master.address, log));
    if (!options.scaleNoPaced)
      for (const regions of [[], [0xff]]) paced.push(await pacedListing(fleet, regions, log));
  } finally {
    await master.close();
    await fleet.stop();
  }
  const answering = fleet.specs.filter((s) => {
    const b = behaviourOf(s);
    return !b.silent && !b.malformed;
  }).length;
  void outDir;

  const steady = runs
    .map((r) => r.crawls.find((cr) => cr.crawl === 2))
    .filter((cr): cr is ScaleCrawl => cr !== undefined);
  const rowOf = (cr: ScaleCrawl, label: string): string[] => {
    const n = Math.max(1, cr.queried);
    const workersMs = cr.workerCpuMs.reduce((a, b) => a + b, 0);
    return [
      `${cr.workers}${label}`,
      cr.finished ? seconds(cr.wallMs, 1) : `not finished after ${seconds(cr.wallMs, 0)}`,
      `**${num(cr.queried / (cr.wallMs / 1000))}**`,
      `**${perServer(workersMs, n)}** (${cr.workerCpuMs.map((ms) => seconds(ms, 1)).join(" + ")})`,
      `${perServer(cr.pgBackendCpuMs, n)} (all postgres ${perServer(cr.pgAllCpuMs, n)})`,
      perServer(cr.redisCpuMs, n),
      perServer(cr.schedulerCpuMs, n),
      `${seconds(cr.machineCpuMs, 0)} of ${seconds(cr.wallMs * 2, 0)}`,
    ];
  };
  const checkRow = (cr: ScaleCrawl): string[] => [
    `${cr.workers} / crawl ${cr.crawl}`,
    `${num(cr.listed)} listed, ${num(cr.queried)} queried, ${num(cr.answered)} answered`,
    `${num(cr.samples)} samples; max **${cr.maxSamplesPerServer}** per server; ${num(cr.serversWithoutSample)} batched servers without one`,
    `${num(cr.batches)} (${num(cr.batchesOpen)} open); ${num(cr.batchJobs)} jobs started **${num(cr.batchJobStarts)}** times, ${num(cr.batchJobsStalled)} stalls`,
    num(cr.simRequests / Math.max(1, cr.listed), 3),
    `${num(cr.xactCommit / Math.max(1, cr.queried), 3)} tx, ${num(cr.rowsInserted / Math.max(1, cr.queried), 2)} inserted + ${num(cr.rowsUpdated / Math.max(1, cr.queried), 2)} updated; WAL at most ${num(cr.walBytes / Math.max(1, cr.queried), 0)} bytes`,
    `${num(cr.redisPeakBytes / 1024, 0)} KiB peak (${num(cr.redisPeakBytes / Math.max(1, cr.listed), 0)} bytes per server), ${num(cr.redisEndBytes / 1024, 0)} KiB at the end`,
    cr.workerPeakRssBytes.map((b) => mib(b)).join(", "),
  ];
  const all = runs.flatMap((r) => r.crawls);
  const oneEach = all.every(
    (cr) =>
      cr.maxSamplesPerServer === 1 &&
      cr.samples === cr.listed &&
      cr.queried === cr.listed &&
      cr.batchesOpen === 0 &&
      cr.serversWithoutSample === 0 &&
      cr.batchJobStarts === cr.batches &&
      cr.batchJobs === cr.batches,
  );
  const datagrams = steady.map((cr) => cr.simRequests / Math.max(1, cr.listed));
  const datagramSpread =
    datagrams.length > 0
      ? (Math.max(...datagrams) - Math.min(...datagrams)) / Math.min(...datagrams)
      : NaN;
  const biggest = runs[runs.length - 1];
  const bytesPerSample =
    biggest && biggest.sampleRows > 0 ? biggest.sampleTableBytes / biggest.sampleRows : NaN;
  const listingPages = Math.ceil(count / MASTER_ADDRESSES_PER_PACKET);
  const markdown = [
    `One fleet of ${num(count)} simulated servers (${processes} process(es) of the bench's own fleet child, bench/scale/sim-child.ts, which counts the datagrams it receives; the default \`makeFleet\` mix, ${num(answering)} of them answer, players' connection times running on), ` +
      `the simulated Valve master in the bench process with its rate limit and the crawler's pacing off (at a real master's 20-30 requests a minute, ${MASTER_ADDRESSES_PER_PACKET} addresses a page, listing these ${num(count)} servers once would take ${num(listingPages / 30, 1)}-${num(listingPages / 20, 1)} minutes: see docs/scaling.md), and for each worker count a fresh database and Redis prefix on the machine's one PostgreSQL and one Redis: ` +
      "`gsindex serve --role scheduler` (one process, which owns the source) and N x `gsindex serve --role worker`. " +
      `The one-worker defaults (${QUERY_CONCURRENCY} queries in flight, ${WORKER_CONCURRENCY} batch jobs at once) are divided between the N workers (${options.scaleWorkers.map((w) => `${w}: ${shareOf(w).queryConcurrency} / ${shareOf(w).workerConcurrency}`).join(", ")}), so every run puts the same load on the shared two cores; with the full defaults in each worker, 4 workers overloaded this machine and a third of the servers timed out. ` +
      "Each worker count crawls twice: crawl 1 discovers the fleet (a fresh database; its CPU includes the processes starting), crawl 2 (started by enqueuing a start-crawl job, as the API's triggerCrawl does) is the steady state a 5-minute cadence repeats, and the per-server costs come from it. " +
      "Wall time runs from the start to the crawl row being closed.",
    "",
    `Load average (1/5/15 min) on this shared machine: ${runs.map((r) => `${r.workers} worker(s): ${r.loadBefore.map((l) => num(l, 2)).join(" / ")} before, ${r.loadAfter.map((l) => num(l, 2)).join(" / ")} after`).join("; ")}.`,
    "",
    ...runs
      .filter((r) => r.error !== undefined)
      .flatMap((r) => [
        `**The ${r.workers}-worker run failed:** \`${r.error ?? ""}\` (its crawls that finished are below).`,
        "",
      ]),
    'Steady state (crawl 2), CPU per server queried (servers that time out cost less than those that answer: see "answered" below):',
    "",
    table(
      [
        "workers",
        "wall",
        "servers/s",
        "workers CPU per server (each worker)",
        "PostgreSQL CPU per server: bench database backends (all postgres processes)",
        "Redis CPU per server",
        "scheduler CPU per server",
        "machine busy",
      ],
      steady.map((cr) => rowOf(cr, "")),
    ),
    "",
    "Discovery (crawl 1, processes starting included):",
    "",
    table(
      [
        "workers",
        "wall",
        "servers/s",
        "workers CPU per server (each worker)",
        "PostgreSQL CPU per server: bench database backends (all postgres processes)",
        "Redis CPU per server",
        "scheduler CPU per server",
        "machine busy",
      ],
      all.filter((cr) => cr.crawl === 1).map((cr) => rowOf(cr, "")),
    ),
    "",
    `Nothing done twice: ${oneEach ? "**every crawl wrote exactly one sample per listed server**, its counters say queried = listed, every batch closed, and every query-batch job was started exactly once (BullMQ attemptsStarted)" : "**a check failed** (see the table)"}; ` +
      `the simulated servers received ${datagrams.map((d) => num(d, 3)).join(" / ")} datagrams per server in the steady crawls with ${steady.map((cr) => cr.workers).join(" / ")} worker(s) (spread ${num(datagramSpread * 100, 1)} %: how many servers time out, and so are not asked for players and rules, varies with the machine's load).`,
    "",
    table(
      [
        "workers / crawl",
        "crawl counters",
        "samples (SQL)",
        "batches",
        "datagrams received per server",
        "PostgreSQL writes per server (pg_stat_database; WAL of the whole cluster, an upper bound)",
        "Redis memory under the prefix",
        "worker peak RSS",
      ],
      all.map(checkRow),
    ),
    "",
    `Query-batch jobs started more than once: ${all.some((cr) => cr.restartedJobs.length > 0) ? all.map((cr) => `${cr.workers} / crawl ${cr.crawl}: ${cr.restartedJobs.length === 0 ? "none" : cr.restartedJobs.join("; ")}`).join("; ") : "none"}.`,
    "",
    `What the gsindex processes logged (LOG_LEVEL warn) during each crawl: ${all
      .map(
        (cr) =>
          `${cr.workers} / crawl ${cr.crawl}: ${cr.processWarnings.length === 0 ? "nothing" : cr.processWarnings.map((w) => `\`${w.replace(/`/g, "'")}\``).join("; ")}`,
      )
      .join("; ")}.`,
    "",
    `Rows written per server in the steady crawl, by table (pg_stat_user_tables, partitions under their parent; inserted / updated (HOT) / deleted): ${steady
      .map(
        (cr) =>
          `${cr.workers} worker(s): ${cr.tableWrites.map((t) => `${t.table} ${num(t.ins / Math.max(1, cr.queried), 2)} / ${num(t.upd / Math.max(1, cr.queried), 2)} (${num(t.hot / Math.max(1, cr.queried), 2)}) / ${num(t.del / Math.max(1, cr.queried), 2)}`).join(", ")}`,
      )
      .join("; ")}.`,
    "",
    `An idle worker (between crawls) used ${runs.map((r) => `${num(r.workerIdleCpuMsPerSecond, 1)}`).join(" / ")} ms of CPU per second with ${runs.map((r) => r.workers).join(" / ")} worker(s): the fixed cost each added process brings, which a small fleet or a short crawl does not amortise.`,
    "",
    `Raw history on disk: \`pg_total_relation_size('server_sample')\` after the ${biggest?.workers ?? "?"}-worker run's two crawls is ${mib(biggest?.sampleTableBytes ?? NaN)} for ${num(biggest?.sampleRows ?? 0)} samples, ${num(bytesPerSample, 1)} bytes per sample (a table this young has little bloat; bench/storage measures a full raw window). docs/scaling.md turns these figures into the full Steam listing.`,
    "",
    `Listing at the real rate: the runs above list with the master's rate limit and the crawler's pacing off. Here the first ${num(paced[0]?.servers ?? PACED_LISTING_SERVERS)} servers of the same fleet are listed by one worker through the simulated master with the real limit (${REAL_MASTER_RATE_LIMIT.packetsPerWindow} requests per ${seconds(REAL_MASTER_RATE_LIMIT.windowMs, 0)} from one address, then ${seconds(REAL_MASTER_RATE_LIMIT.silenceMs, 0)} of silence) and the crawler's default pacing (${DEFAULT_MASTER_REQUESTS_PER_MINUTE} requests a minute per listing), from the crawl's start to its last listing run closed:`,
    "",
    table(
      [
        "regions listed",
        "listing took",
        "runs (partial)",
        "addresses listed (distinct servers)",
        "master requests (answered, refused by its limit)",
        "errors",
      ],
      paced.map((p) => [
        p.regions,
        p.finished ? `**${seconds(p.wallMs, 0)}**` : `not done after ${seconds(p.wallMs, 0)}`,
        `${p.runs} (${p.runsPartial})`,
        `${num(p.found)} (${num(p.distinct)})`,
        `${num(p.masterRequests)} (${num(p.masterAnswered)}, **${num(p.masterRateLimited)}**)`,
        p.errors.join("; ") || "none",
      ]),
    ),
    "",
    'PostgreSQL and Redis are shared with other work on the machine: "bench database backends" counts only the backends connected to the bench database (the bench\'s own polling connection left out), "all postgres" adds the WAL writer, checkpointer and whatever other sessions did meanwhile; the Redis figure is the whole redis-server. Wall times on a loaded 2-core machine say little: with the fleet, PostgreSQL and the workers on the same two cores, more workers cannot make the crawl faster once the cores are busy; the CPU per server is the figure that carries over.',
  ].join("\n");
  return {
    id: "scale",
    title: "Scale-out (1, 2, 4 workers)",
    markdown,
    commands: [
      `npm run bench -- --only scale --scale-servers ${count} --scale-workers ${options.scaleWorkers.join(",")}`,
    ],
    verdicts: [],
    data: { layout: { count, processes }, runs, paced },
    wallMs: Date.now() - started,
  };
}
