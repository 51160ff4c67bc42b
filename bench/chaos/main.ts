/**
 * `npm run chaos [-- --quick] [--servers N] [--out docs/RELIABILITY.md]`: the fault suite. Starts its own
 * PostgreSQL and Redis on spare loopback ports, a simulated fleet behind a simulated Valve master, and
 * gsindex as separate scheduler, worker and API processes (restarted like an orchestrator would when
 * one exits), then injects one fault after another and writes docs/RELIABILITY.md from scratch: per
 * fault, crawls finished / partial / lost, samples lost and duplicated (SQL against the fleet), API
 * reads that failed during the fault, and the time until a crawl completes again.
 */
import { createWriteStream, mkdirSync, writeFileSync, type WriteStream } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import type { ChildProcess } from "node:child_process";
import { Client } from "pg";
import { migrate } from "../../src/migrate";
import { freePort } from "../../src/shared/free-port";
import { withDatabase } from "../../src/shared/services";
import { startSimValveMaster } from "../../src/simulator/master";
import { repoRoot, RUN_OCTET, spawnService } from "../lib/child";
import { num, seconds, table } from "../lib/report";
import { startSimulator } from "../lib/simulator";
import { startOwnPostgres, startOwnRedis } from "../../src/shared/own-services";

interface ChaosOptions {
  quick: boolean;
  servers: number;
  intervalMs: number;
  redisStopMs: number;
  pgShortMs: number;
  pgLongMs: number;
  /** After a fault ends: how long to wait for a crawl to complete again before calling it not recovered. */
  settleMs: number;
  out: string;
}

function parseChaosArgs(argv: string[]): ChaosOptions {
  const { values } = parseArgs({
    args: argv,
    options: { quick: { type: "boolean" }, servers: { type: "string" }, out: { type: "string" } },
  });
  const quick = values.quick === true;
  return {
    quick,
    servers: values.servers ? Number(values.servers) : quick ? 2000 : 10_000,
    intervalMs: quick ? 30_000 : 60_000,
    redisStopMs: quick ? 10_000 : 40_000,
    pgShortMs: quick ? 10_000 : 60_000,
    pgLongMs: quick ? 30_000 : 600_000,
    settleMs: quick ? 120_000 : 600_000,
    out: values.out ?? "docs/RELIABILITY.md",
  };
}

const ROLES = ["scheduler", "worker", "api"] as const;
type Role = (typeof ROLES)[number];

function log(line: string): void {
  process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One gsindex role as a child process, restarted when it exits unless we stopped it on purpose. */
class RoleProcess {
  child: ChildProcess | null = null;
  crashes = 0;
  private held = false;
  private readonly logFile: WriteStream;

  constructor(
    readonly role: Role,
    private readonly env: NodeJS.ProcessEnv,
    logDir: string,
  ) {
    this.logFile = createWriteStream(path.join(logDir, `${role}.log`), { flags: "a" });
  }

  start(): void {
    const child = spawnService(["serve", "--role", this.role], {
      env: this.env,
      raiseFileLimit: this.role === "worker",
    });
    child.stdout?.pipe(this.logFile, { end: false });
    child.stderr?.pipe(this.logFile, { end: false });
    child.once("exit", (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      if (this.held) return;
      this.crashes += 1;
      log(`${this.role} exited by itself (${signal ?? code}): restarting it in 1 s`);
      setTimeout(() => {
        if (!this.held && this.child === null) this.start();
      }, 1000);
    });
    this.child = child;
  }

  /** Sends `signal` and waits for the exit (the process is not restarted until start()); returns ms until it was gone. */
  async signal(signal: NodeJS.Signals, timeoutMs = 60_000): Promise<number> {
    const child = this.child;
    if (!child) return 0;
    this.held = true;
    const started = Date.now();
    const gone = new Promise<void>((r) => child.once("exit", () => r()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    await gone;
    clearTimeout(timer);
    return Date.now() - started;
  }

  restart(): void {
    this.held = false;
    this.start();
  }

  async stop(): Promise<void> {
    await this.signal("SIGTERM", 40_000);
    this.logFile.end();
  }
}

interface FaultRecord {
  name: string;
  what: string;
  /** Window of crawls attributed to this fault: those started in [windowStartMs, windowEndMs). */
  windowStartMs: number;
  faultStartMs: number;
  faultEndMs: number;
  windowEndMs: number;
  recoveredMs: number | null;
  apiReads: number;
  apiFailed: number;
  crashes: number;
  exitMs?: number;
  notes: string[];
}

/** API reads in the background: one every 250 ms, each with a 5 s deadline. */
class ApiReader {
  readonly reads: Array<{ atMs: number; endMs: number; ok: boolean }> = [];
  private running = true;
  private loop: Promise<void> | null = null;

  constructor(private readonly base: string) {}

  start(): void {
    this.loop = (async () => {
      while (this.running) {
        const atMs = Date.now();
        let ok = false;
        try {
          const response = await fetch(`${this.base}/graphql`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              query: "{ servers(first: 10) { totalCount edges { node { id name players } } } }",
            }),
            signal: AbortSignal.timeout(5000),
          });
          const body = (await response.json()) as { errors?: unknown[] };
          ok = response.status === 200 && !body.errors;
        } catch {
          ok = false;
        }
        this.reads.push({ atMs, endMs: Date.now(), ok });
        await sleep(250);
      }
    })();
  }

  between(fromMs: number, toMs: number): { total: number; failed: number } {
    // Every read that was in flight at some point of the window (a slow read started before it counts).
    const inside = this.reads.filter((r) => r.endMs >= fromMs && r.atMs < toMs);
    return { total: inside.length, failed: inside.filter((r) => !r.ok).length };
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

async function main(): Promise<number> {
  const options = parseChaosArgs(process.argv.slice(2));
  const root = repoRoot();
  const outDir = path.join(root, "bench", "out", "chaos");
  mkdirSync(outDir, { recursive: true });
  const runStarted = Date.now();
  const loadBefore = os.loadavg();
  log(`options ${JSON.stringify(options)}`);

  const pg = await startOwnPostgres();
  const redis = await startOwnRedis();
  // Ctrl-C: leave nothing running (the role processes, the simulator, Redis and PostgreSQL).
  const children: Array<() => Promise<void>> = [() => redis.destroy(), () => pg.destroy()];
  const interrupted = (): void => {
    log("interrupted: stopping everything");
    void (async () => {
      for (const stop of children.reverse()) await stop().catch(() => undefined);
      process.exit(130);
    })();
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  log(`PostgreSQL on 127.0.0.1:${pg.port}, Redis on 127.0.0.1:${redis.port}`);
  const admin = new Client({ connectionString: pg.url });
  await admin.connect();
  await admin.query("CREATE DATABASE gsindex_chaos");
  await admin.end();
  const databaseUrl = withDatabase(pg.url, "gsindex_chaos");
  await migrate(databaseUrl, { dir: path.join(root, "prisma", "migrations") });

  const processes = Math.max(1, Math.ceil(options.servers / 10_000));
  const hosts = Array.from({ length: processes }, (_v, i) => `127.89.${RUN_OCTET}.${i + 1}`);
  log(`starting ${num(options.servers)} simulated servers on ${hosts.join(", ")}`);
  const sim = await startSimulator({
    servers: options.servers,
    processes,
    hosts,
    basePort: 21000,
    jsonOut: path.join(outDir, "fleet.json"),
  });
  children.push(() => sim.stop());
  const master = await startSimValveMaster({
    fleet: sim.specs,
    rateLimit: false,
    host: "127.0.0.1",
    port: 0,
  });
  const listedByMaster = sim.specs.filter(
    (s) => s.protocol === undefined || s.protocol === "source",
  ).length;

  const apiPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    GSINDEX_QUEUE_PREFIX: "chaos",
    MASTER_SOURCES: JSON.stringify([
      {
        name: "chaos-master",
        kind: "VALVE_UDP",
        host: master.address.host,
        port: master.address.port,
        intervalMs: options.intervalMs,
        options: { requestsPerMinute: 0 },
      },
    ]),
    ADDRESS_ALLOW_LIST: "127.0.0.0/8",
    // Each simulator process puts thousands of servers on its one loopback address: not a farm of fakes.
    FARM_RULE_EXEMPT_RANGES: "127.0.0.0/8",
    CRAWL_INTERVAL_MS: String(options.intervalMs),
    // Each crawl lists, then queries what it listed: the losses are counted per listing crawl.
    QUERY_FROM_INDEX: "0",
    MIGRATE_ON_START: "false",
    API_HOST: "127.0.0.1",
    API_PORT: String(apiPort),
    STOP_GRACE_MS: "5000",
    LOG_LEVEL: "info",
  };
  const roles = new Map<Role, RoleProcess>(ROLES.map((r) => [r, new RoleProcess(r, env, outDir)]));
  const role = (r: Role): RoleProcess => roles.get(r)!;
  for (const r of ROLES)
    children.push(() =>
      role(r)
        .signal("SIGKILL")
        .then(() => undefined),
    );
  const reader = new ApiReader(`http://127.0.0.1:${apiPort}`);
  const faults: FaultRecord[] = [];

  // A fresh client per question: the database itself is one of the faults.
  const sql = async <T extends Record<string, unknown>>(
    text: string,
    params: unknown[] = [],
  ): Promise<T[] | null> => {
    const c = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
    c.on("error", () => undefined);
    try {
      await c.connect();
      return (await c.query<T>(text, params)).rows;
    } catch {
      return null;
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  const crawlInFlight = async (): Promise<boolean> =>
    (
      (await sql(
        "SELECT 1 FROM crawl WHERE finished_at IS NULL AND queried > 0 AND started_at > now() - interval '10 minutes'",
      )) ?? []
    ).length > 0;
  /** The first moment a crawl started at or after `sinceMs` finished complete, waiting up to settleMs. */
  const waitForCompleteCrawl = async (sinceMs: number): Promise<number | null> => {
    const deadline = Date.now() + options.settleMs;
    while (Date.now() < deadline) {
      const rows = await sql<{ f: Date }>(
        "SELECT min(finished_at) AS f FROM crawl WHERE started_at >= $1 AND finished_at IS NOT NULL AND NOT partial",
        [new Date(sinceMs - 1000)],
      );
      const f = rows?.[0]?.f;
      if (f) return f.getTime();
      await sleep(1000);
    }
    return null;
  };
  const waitForCrawlInFlight = async (): Promise<void> => {
    for (let i = 0; i < 600 && !(await crawlInFlight()); i += 1) await sleep(250);
  };

  let windowStart = Date.now();
  const runFault = async (
    name: string,
    what: string,
    inject: (record: FaultRecord) => Promise<void>,
  ): Promise<void> => {
    log(`fault: ${name}`);
    const crashesBefore = [...roles.values()].reduce((n, p) => n + p.crashes, 0);
    const record: FaultRecord = {
      name,
      what,
      windowStartMs: windowStart,
      faultStartMs: Date.now(),
      faultEndMs: 0,
      windowEndMs: 0,
      recoveredMs: null,
      apiReads: 0,
      apiFailed: 0,
      crashes: 0,
      notes: [],
    };
    await inject(record);
    record.faultEndMs = Date.now();
    const completeAt = await waitForCompleteCrawl(record.faultEndMs);
    record.recoveredMs = completeAt === null ? null : Math.max(0, completeAt - record.faultEndMs);
    const reads = reader.between(record.faultStartMs, record.faultEndMs);
    record.apiReads = reads.total;
    record.apiFailed = reads.failed;
    record.crashes = [...roles.values()].reduce((n, p) => n + p.crashes, 0) - crashesBefore;
    record.windowEndMs = Date.now();
    windowStart = record.windowEndMs;
    log(
      `  ${name}: ${record.recoveredMs === null ? "NOT recovered" : `recovered ${seconds(record.recoveredMs, 1)} after the fault`}, API reads failed ${reads.failed}/${reads.total}, crashes ${record.crashes}`,
    );
    faults.push(record);
  };

  try {
    for (const r of ROLES) role(r).start();
    log("waiting for the first complete crawl (baseline)");
    await runFault("baseline", "no fault: the first crawls", async () => undefined);
    reader.start();

    await runFault(
      "worker SIGKILL",
      "the worker process SIGKILLed mid-crawl, restarted 1 s later (as an orchestrator would)",
      async () => {
        await waitForCrawlInFlight();
        await role("worker").signal("SIGKILL");
        await sleep(1000);
        role("worker").restart();
      },
    );
    await runFault(
      "Redis SIGSTOP",
      `Redis stopped (SIGSTOP) for ${seconds(options.redisStopMs, 0)} mid-crawl, then SIGCONT`,
      async () => {
        await waitForCrawlInFlight();
        redis.pause();
        await sleep(options.redisStopMs);
        redis.resume();
      },
    );
    await runFault(
      "Redis restarted empty",
      "Redis SIGKILLed mid-crawl and a new, empty one started on the same port 2 s later",
      async () => {
        await waitForCrawlInFlight();
        await redis.kill();
        await sleep(2000);
        await redis.restart();
      },
    );
    await runFault(
      "PostgreSQL stopped (short)",
      `PostgreSQL stopped (pg_ctl stop -m fast) mid-crawl for ${seconds(options.pgShortMs, 0)}`,
      async () => {
        await waitForCrawlInFlight();
        await pg.stop();
        await sleep(options.pgShortMs);
        await pg.start();
      },
    );
    await runFault(
      "PostgreSQL stopped (long)",
      `PostgreSQL stopped mid-crawl for ${seconds(options.pgLongMs, 0)}`,
      async () => {
        await waitForCrawlInFlight();
        await pg.stop();
        await sleep(options.pgLongMs);
        await pg.start();
      },
    );
    for (const r of ROLES) {
      await runFault(
        `SIGTERM ${r}`,
        `SIGTERM to the ${r} process${r === "api" ? "" : " mid-crawl"} (STOP_GRACE_MS 5000), restarted once it exited`,
        async (record) => {
          if (r !== "api") await waitForCrawlInFlight();
          record.exitMs = await role(r).signal("SIGTERM");
          role(r).restart();
        },
      );
    }
  } finally {
    await reader.stop();
    for (const r of ROLES) await role(r).stop();
  }

  // Counted once everything has stopped, so a crawl still running at the end of its window is judged on its final state.
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  const stats = [];
  for (const f of faults) {
    const rows = (
      await c.query<{
        crawls: string;
        finished: string;
        partial: string;
        lost: string;
        samples: string;
        expected: string;
        missing: string;
        overlapped_samples: string;
        dup_rows: string;
      }>(
        `WITH w AS (SELECT * FROM crawl WHERE started_at >= $1 AND started_at < $2 AND source_id = (SELECT id FROM master_source WHERE name = 'chaos-master')),
              s AS (SELECT crawl_id, count(*) AS n, count(DISTINCT game_server_id) AS d FROM server_sample_range($1, 'infinity') WHERE crawl_id IN (SELECT id FROM w) GROUP BY crawl_id),
              -- A crawl that never finished ran until its last batch was written.
              e AS (SELECT c.id, c.source_id, c.started_at, COALESCE(c.finished_at, (SELECT max(done_at) FROM crawl_batch b WHERE b.crawl_id = c.id), c.started_at) AS ended_at FROM crawl c),
              o AS (SELECT DISTINCT b.id FROM w b JOIN e a ON a.source_id = b.source_id AND a.id <> b.id AND a.started_at <= b.started_at AND a.ended_at > b.started_at)
         SELECT count(*)::text AS crawls,
                count(*) FILTER (WHERE finished_at IS NOT NULL AND NOT partial)::text AS finished,
                count(*) FILTER (WHERE finished_at IS NOT NULL AND partial)::text AS partial,
                count(*) FILTER (WHERE finished_at IS NULL)::text AS lost,
                COALESCE(sum(s.n), 0)::text AS samples,
                (count(*) * $3::int)::text AS expected,
                COALESCE(sum(GREATEST(0, $3::int - COALESCE(s.d, 0))), 0)::text AS missing,
                COALESCE(sum(s.n) FILTER (WHERE w.id IN (SELECT id FROM o)), 0)::text AS overlapped_samples,
                COALESCE(sum(s.n - s.d), 0)::text AS dup_rows
         FROM w LEFT JOIN s ON s.crawl_id = w.id`,
        [new Date(f.windowStartMs), new Date(f.windowEndMs), listedByMaster],
      )
    ).rows[0]!;
    stats.push({
      fault: f,
      ...Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, Number(v)])),
    } as {
      fault: FaultRecord;
      crawls: number;
      finished: number;
      partial: number;
      lost: number;
      samples: number;
      expected: number;
      missing: number;
      overlapped_samples: number;
      dup_rows: number;
    });
  }
  const failedJobs =
    (await c.query<{ n: string }>("SELECT count(*)::text AS n FROM crawl WHERE error IS NOT NULL"))
      .rows[0]?.n ?? "0";
  await c.end();

  await master.close();
  await sim.stop();
  await redis.destroy();
  await pg.destroy();

  const totalMs = Date.now() - runStarted;
  const command = `npm run chaos${process.argv.slice(2).length > 0 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`;
  const markdown = render(options, stats, {
    totalMs,
    command,
    loadBefore,
    loadAfter: os.loadavg(),
    listedByMaster,
    crawlErrors: Number(failedJobs),
  });
  writeFileSync(path.join(outDir, "results.json"), JSON.stringify({ options, stats }, null, 2));
  const file = path.resolve(root, options.out);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, markdown);
  log(`wrote ${path.relative(root, file)} (${seconds(totalMs, 0)})`);
  return 0;
}

type FaultStats = {
  fault: FaultRecord;
  crawls: number;
  finished: number;
  partial: number;
  lost: number;
  samples: number;
  expected: number;
  missing: number;
  overlapped_samples: number;
  dup_rows: number;
};

function render(
  options: ChaosOptions,
  stats: FaultStats[],
  run: {
    totalMs: number;
    command: string;
    loadBefore: number[];
    loadAfter: number[];
    listedByMaster: number;
    crawlErrors: number;
  },
): string {
  const rows = stats.map((s) => [
    s.fault.name,
    `${s.crawls}`,
    `${s.finished} / ${s.partial} / **${s.lost}**`,
    num(s.missing),
    num(s.overlapped_samples + s.dup_rows),
    s.fault.name === "baseline" ? "n/a" : `${s.fault.apiFailed} of ${s.fault.apiReads}`,
    s.fault.recoveredMs === null
      ? `**not within ${seconds(options.settleMs, 0)}**`
      : seconds(s.fault.recoveredMs, 1),
    `${s.fault.crashes}`,
    s.fault.exitMs === undefined ? "" : seconds(s.fault.exitMs, 1),
  ]);
  const targets = stats.filter((s) => s.fault.name !== "baseline");
  const lostCrawls = targets.reduce((n, s) => n + s.lost, 0);
  const lostSamples = targets.reduce((n, s) => n + s.missing, 0);
  const dupSamples = targets.reduce((n, s) => n + s.overlapped_samples + s.dup_rows, 0);
  const redisDown = stats.filter((s) => s.fault.name.startsWith("Redis"));
  const redisReadsFailed = redisDown.reduce((n, s) => n + s.fault.apiFailed, 0);
  const verdict = (met: boolean): string => (met ? "met" : "**missed**");
  return [
    "# Reliability",
    "",
    `Generated by \`${run.command}\` on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; the run took ${seconds(run.totalMs, 0)}. This file is rewritten from scratch by every run of the fault suite (bench/chaos/); do not edit it by hand.`,
    "",
    `Setup: its own PostgreSQL and redis-server on spare loopback ports, ${num(options.servers)} simulated servers (\`gsindex simulate\`, the default mix of odd servers) of which ${num(run.listedByMaster)} are listed by a simulated Valve master, crawled every ${seconds(options.intervalMs, 0)} by gsindex as three processes (\`gsindex serve --role scheduler\`, \`--role worker\`, \`--role api\`; STOP_GRACE_MS 5000). A process that exits by itself is restarted 1 s later, as an orchestrator would. An API reader sends a GraphQL list query every 250 ms throughout.` +
      (options.quick
        ? " **Quick mode** (`--quick`): a smaller fleet, a 30 s interval and shortened faults (Redis stopped 10 s instead of 40 s, PostgreSQL 10 s instead of 60 s and 30 s instead of 10 minutes)."
        : ""),
    "",
    `Machine: ${os.cpus().length} cores shared with other work (load average ${run.loadBefore.map((l) => num(l, 2)).join(" / ")} at the start, ${run.loadAfter.map((l) => num(l, 2)).join(" / ")} at the end).`,
    "",
    "## Targets",
    "",
    table(
      ["target", "measured", "verdict"],
      [
        ["0 crawls lost", `${lostCrawls}`, verdict(lostCrawls === 0)],
        ["0 samples lost", num(lostSamples), verdict(lostSamples === 0)],
        ["0 samples duplicated", num(dupSamples), verdict(dupSamples === 0)],
        [
          "API reads served while Redis is down",
          `${redisReadsFailed} failed`,
          verdict(redisReadsFailed === 0),
        ],
      ],
    ),
    "",
    "## Per fault",
    "",
    "Each fault is injected once the previous one has recovered (or its wait ran out), while a crawl is in flight. Its crawls are the crawls of the source that started from the end of the previous fault's window to the end of its own, judged on their final state after the whole run.",
    "",
    table(
      [
        "fault",
        "crawls",
        "finished / partial / lost",
        "samples lost",
        "samples duplicated",
        "API reads failed during the fault",
        "time to recover",
        "process restarts",
        "exit after SIGTERM",
      ],
      rows,
    ),
    "",
    "### The faults",
    "",
    ...stats.map((s) => `- **${s.fault.name}**: ${s.fault.what}.`),
    "",
    "### How each figure is counted",
    "",
    "- **finished / partial / lost**: `crawl.finished_at` set and `partial` false / set and `partial` true / never set.",
    `- **samples lost**: per crawl, the ${num(run.listedByMaster)} servers the master lists minus the distinct servers with a \`server_sample\` row of that crawl (every listed server gets a sample, online or not), summed.`,
    "- **samples duplicated**: rows of `server_sample` beyond one per server and crawl, plus every sample written by a crawl that started while another crawl of the same source was still running (two samples of a server for one interval; a crawl that never finished counts as running until its last batch was written).",
    "- **API reads failed**: GraphQL list reads (5 s deadline) that errored or timed out between the start and the end of the fault.",
    "- **time to recover**: from the end of the fault to the first complete (not partial) crawl that started after it finishing; it includes the wait for the next scheduled crawl (up to one interval) and that crawl's own duration, which the baseline row shows for a crawl with no fault.",
    "- **process restarts**: gsindex processes that exited by themselves during the fault window (restarted by the harness).",
    "",
    `Crawls closed with an error message over the whole run: ${run.crawlErrors}. The processes' logs of a run are in bench/out/chaos/.`,
    "",
    "## How to run",
    "",
    "- `npm run chaos`: the full suite (10,000 servers, a 60 s interval, Redis stopped 40 s, PostgreSQL stopped 60 s and 10 minutes); about 30 minutes (1,731 s on 2 shared cores on 2026-11-24).",
    "- `npm run chaos -- --quick`: the same faults, shortened; about 10-20 minutes. `--servers N` changes the fleet size.",
    "- Needs redis-server on the PATH and the PostgreSQL server binaries (/usr/lib/postgresql/<version>/bin); neither the machine's PostgreSQL nor its Redis is touched.",
    "",
  ].join("\n");
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
