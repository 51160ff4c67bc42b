/**
 * Part 'shared-names': the shared-player-names rule of a crawl's close over pools of simulated servers, the
 * way it runs now (src/crawler/store/shared-names.ts: PostgreSQL reads the pool with integer name ids, the
 * worker counts the pairs) against the single PostgreSQL statement it replaced (kept here as the baseline),
 * on the same database, with the same verdicts checked.
 */
import type { Client } from "pg";
import { checkSharedPlayerNames } from "../../src/crawler/store/shared-names";
import {
  DEFAULT_FAKE_PLAYER_RULES,
  GENERIC_NAME_SERVERS,
  type FakePlayerRules,
} from "../../src/crawler/fake-players";
import { createDb } from "../../src/shared/db";
import { playersOf } from "../../src/simulator/content";
import { makeFleet } from "../../src/simulator/make-fleet";
import type { BenchOptions } from "../lib/args";
import { connect, createBenchDb, otherBackendPids } from "../lib/bench-db";
import { CpuMeter } from "../lib/procs";
import { mib, num, seconds, table, type PartResult } from "../lib/report";

/**
 * A lower bar than the defaults (3 servers, 5 names), so that the verdicts the two ways are compared on are
 * not all false: the simulator's servers share no name lists, and at the defaults none fires.
 */
const RULES = { sharedNameServers: 5, sharedNamesPerServer: 1 } as const;

const RULES_NOW: FakePlayerRules = { ...DEFAULT_FAKE_PLAYER_RULES, ...RULES };

/** The baseline is cancelled after this long (it took minutes at 100,000 servers). */
const BASELINE_TIMEOUT_MS = 400_000;

/**
 * Pools larger than this skip the baseline: it was cancelled at BASELINE_TIMEOUT_MS at 300,000 servers
 * (docs/BENCHMARKS-history.md), so running it there only costs the run 400 s.
 */
const BASELINE_MAX_SERVERS = 100_000;

/** The rule's own budget, raised so that the run measures the whole comparison rather than the cut. */
const BUDGET_MS = 400_000;

/** Servers a generated pool has per loopback address, as the simulator's fleets lay them out. */
const SERVERS_PER_HOST = 10_000;

/** The statement the rule ran until 2026-11-24 (its verdicts; the flag update after it left out). */
const BASELINE_SQL = `
  WITH pool AS (
    SELECT id, COALESCE(bots, 0) AS bots, player_names FROM game_server
    WHERE status = 'ONLINE' AND last_answered_at >= $1::timestamptz
  ), names AS (
    SELECT DISTINCT p.id, n.name FROM pool p CROSS JOIN LATERAL unnest(string_to_array(p.player_names, E'\\n')) AS n(name)
    WHERE n.name <> ''
  ), listed AS (
    SELECT id, count(*) AS n FROM names GROUP BY id
  ), usable AS (
    SELECT name FROM names GROUP BY name HAVING count(*) BETWEEN 2 AND $2::int
  ), un AS (
    SELECT names.id, names.name FROM names JOIN usable USING (name)
  ), pairs AS (
    SELECT a.id, b.id AS other, count(*) AS k FROM un a JOIN un b ON b.name = a.name AND b.id <> a.id GROUP BY a.id, b.id
  ), matches AS (
    SELECT x.id, count(*) AS others FROM pairs x JOIN pool p ON p.id = x.id JOIN listed l ON l.id = x.id
    WHERE x.k - p.bots >= $3::int AND 2 * x.k >= l.n
    GROUP BY x.id
  )
  SELECT p.id::text AS id FROM pool p JOIN matches m ON m.id = p.id WHERE m.others >= $4::int`;

interface Way {
  wallMs: number;
  postgresCpuMs: number;
  /** The bench process's CPU: the worker's share of the rule (the comparison, reading the rows). */
  workerCpuMs: number;
  fires: number | null;
  outcome: string;
  /** The bench process's V8 heap at its highest during the rule, above what it held before (sampled every 5 ms). */
  peakHeapAboveBytes?: number;
}

interface PoolRun {
  servers: number;
  pool: number;
  namePairs: number;
  before: Way;
  after: Way;
  sameVerdicts: boolean | null;
}

async function generatePool(c: Client, servers: number): Promise<void> {
  const hosts = Array.from(
    { length: Math.ceil(servers / SERVERS_PER_HOST) },
    (_, i) => `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`,
  );
  const specs = makeFleet({ count: servers, seed: 1, hosts });
  const chunk = 5000;
  for (let off = 0; off < specs.length; off += chunk) {
    const rows = specs.slice(off, off + chunk).map((s) => ({
      address: s.host,
      query_port: s.queryPort,
      bots: s.state.bots,
      names: playersOf(s)
        .map((p) => p.name)
        .filter((n) => n !== "")
        .join("\n"),
    }));
    await c.query(
      `INSERT INTO game_server (address, query_port, protocol, status, last_answered_at, updated_at, bots, player_names)
      SELECT x.address, x.query_port, 'source', 'ONLINE', now(), now(), x.bots, x.names
      FROM jsonb_to_recordset($1::jsonb) AS x(address text, query_port int, bots int, names text)`,
      [JSON.stringify(rows)],
    );
  }
  await c.query("VACUUM ANALYZE game_server");
}

async function measurePool(
  servers: number,
  keepDb: boolean,
  log: (line: string) => void,
): Promise<PoolRun> {
  const benchDb = await createBenchDb(`names_${servers}`);
  const c = await connect(benchDb.url);
  const db = createDb(benchDb.url, { max: 2 });
  try {
    log(`shared-names ${num(servers)}: generating the pool`);
    await generatePool(c, servers);
    const since = new Date(Date.now() - 3_600_000);
    const ownPid = Number(
      (await c.query<{ p: number }>("SELECT pg_backend_pid() AS p")).rows[0]?.p,
    );
    const shape = (
      await c.query<{ pool: number; pairs: number }>(
        `SELECT count(DISTINCT id)::int AS pool, count(*)::int AS pairs FROM (
          SELECT id, unnest(string_to_array(player_names, E'\\n')) AS name FROM game_server) x WHERE name <> ''`,
      )
    ).rows[0] ?? { pool: 0, pairs: 0 };

    const ownMeter = new CpuMeter(() => [ownPid]);
    let started = performance.now();
    let beforeIds: Set<string> | null = null;
    let beforeOutcome = "finished";
    if (servers > BASELINE_MAX_SERVERS)
      beforeOutcome = `not run above ${num(BASELINE_MAX_SERVERS)} servers`;
    else
      try {
        log(`shared-names ${num(servers)}: the baseline statement`);
        await c.query(`SET statement_timeout = ${BASELINE_TIMEOUT_MS}`);
        const rows = await c.query<{ id: string }>(BASELINE_SQL, [
          since.toISOString(),
          GENERIC_NAME_SERVERS,
          RULES.sharedNamesPerServer,
          RULES.sharedNameServers - 1,
        ]);
        beforeIds = new Set(rows.rows.map((r) => r.id));
      } catch (err) {
        beforeOutcome = /statement timeout/i.test(String(err))
          ? `cancelled at ${seconds(BASELINE_TIMEOUT_MS, 0)}`
          : `failed: ${String(err)}`;
      } finally {
        await c.query("SET statement_timeout = 0");
      }
    const before: Way = {
      wallMs: performance.now() - started,
      postgresCpuMs: ownMeter.usedMs(),
      workerCpuMs: 0,
      fires: beforeIds?.size ?? null,
      outcome: beforeOutcome,
    };

    log(`shared-names ${num(servers)}: the rule as it runs now`);
    const crawlId = await openBenchCrawl(c, since);
    await db.$queryRaw`SELECT 1`;
    const pids = await otherBackendPids(c);
    const meter = new CpuMeter(() => pids);
    const heapBefore = process.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    const heapTimer = setInterval(() => {
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    }, 5);
    const cpuBefore = process.cpuUsage();
    started = performance.now();
    const outcome = await checkSharedPlayerNames(db, crawlId, since, {
      fakePlayers: RULES_NOW,
      sharedNamesBudgetMs: BUDGET_MS,
    }).finally(() => clearInterval(heapTimer));
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const afterIds = new Set(
      (
        await c.query<{ id: string }>(
          "SELECT id::text AS id FROM game_server WHERE 'SHARED_PLAYER_NAMES' = ANY(fake_reasons)",
        )
      ).rows.map((r) => r.id),
    );
    const after: Way = {
      wallMs,
      postgresCpuMs: meter.usedMs(),
      workerCpuMs: (cpu.user + cpu.system) / 1000,
      fires: afterIds.size,
      outcome,
      peakHeapAboveBytes: heapPeak - heapBefore,
    };
    const sameVerdicts =
      beforeIds === null
        ? null
        : beforeIds.size === afterIds.size && [...beforeIds].every((id) => afterIds.has(id));
    return { servers, pool: shape.pool, namePairs: shape.pairs, before, after, sameVerdicts };
  } finally {
    await db.$disconnect();
    await c.end();
    if (!keepDb) await benchDb.drop();
  }
}

/** A crawl row for the rule to record its result on (the rule reads earlier closes' records from it). */
async function openBenchCrawl(c: Client, startedAt: Date): Promise<number> {
  const source = await c.query<{ id: number }>(
    "INSERT INTO master_source (name, kind, host, updated_at) VALUES ('bench', 'ADDRESS_LIST', 'x', now()) RETURNING id",
  );
  const crawl = await c.query<{ id: string }>(
    "INSERT INTO crawl (key, source_id, started_at) VALUES ('bench', $1, $2) RETURNING id::text AS id",
    [source.rows[0]?.id, startedAt],
  );
  return Number(crawl.rows[0]?.id);
}

const way = (w: Way): string =>
  w.outcome.startsWith("not run")
    ? w.outcome
    : `${seconds(w.wallMs, 1)} wall; PostgreSQL ${seconds(w.postgresCpuMs, 1)}` +
      (w.workerCpuMs > 0 ? ` + worker ${seconds(w.workerCpuMs, 1)}` : "") +
      ` CPU; ${w.fires === null ? "no verdicts" : `${num(w.fires)} fire`} (${w.outcome})` +
      (w.peakHeapAboveBytes === undefined
        ? ""
        : `; heap at most ${mib(w.peakHeapAboveBytes)} above its level before`);

export async function runSharedNamesPart(
  options: BenchOptions,
  _outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = performance.now();
  const runs: PoolRun[] = [];
  for (const servers of options.sharedNamesServers)
    runs.push(await measurePool(servers, options.keepDb, log));
  const markdown = [
    `Pools of servers answering at once, each with the player names the simulator gives it (\`makeFleet({ count, seed: 1 })\`, src/simulator/content.ts: mostly names of their own, as real servers' players have, and a few common ones many servers share; docs/simulator.md, "Player names"), written straight into a fresh database. The rule's bar is lowered to ${RULES.sharedNameServers} servers and ${RULES.sharedNamesPerServer} name (defaults 3 and 5) so that some servers fire and the two ways' verdicts can be compared; its budget is raised to ${seconds(BUDGET_MS, 0)} so the whole comparison is measured. "Before": the single statement the rule ran until 2026-11-24 (a PostgreSQL hash aggregation with one group per pair of servers sharing a name), its verdicts only, on the bench's own connection. "Now": \`checkSharedPlayerNames\` as the close calls it (the pool read with integer name ids, the pairs counted in this process, the changed flags written). PostgreSQL CPU is the bench database's backends' (/proc), the worker's this process's; the heap is this process's V8 heap while the rule ran (the pool's rows and name ids it holds). The baseline is not run above ${num(BASELINE_MAX_SERVERS)} servers (cancelled at ${seconds(BASELINE_TIMEOUT_MS, 0)} at 300,000 in the run of 2026-11-24 22:06 UTC).`,
    "",
    table(
      [
        "servers",
        "pool: servers with a name (server, name pairs)",
        "before",
        "now",
        "same verdicts",
      ],
      runs.map((r) => [
        num(r.servers),
        `${num(r.pool)} (${num(r.namePairs)})`,
        way(r.before),
        way(r.after),
        r.sameVerdicts === null ? "not compared" : r.sameVerdicts ? "**yes**" : "**no**",
      ]),
    ),
  ].join("\n");
  return {
    id: "shared-names",
    title: "The shared-names rule at a close",
    markdown,
    commands: [
      `npm run bench -- --only shared-names --shared-names-servers ${options.sharedNamesServers.join(",")}`,
    ],
    verdicts: runs.map((r) => ({
      what: `shared-names rule at a close, ${num(r.servers)} servers`,
      target: `within its ${seconds(30_000, 0)} budget`,
      measured: `${seconds(r.after.wallMs, 1)} (before: ${seconds(r.before.wallMs, 1)}, ${r.before.outcome})`,
      met: r.after.outcome === "checked" && r.after.wallMs <= 30_000,
    })),
    data: runs,
    wallMs: performance.now() - started,
  };
}
