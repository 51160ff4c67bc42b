/**
 * Cadence at the master's pace (issue 14 item 6): N simulated servers behind the simulated Valve master at its
 * real rate limit (30 packets a minute, then a minute of silence; 231 addresses a packet), listed by the
 * service paced at 29 requests a minute, with QUERY_FROM_INDEX=1: the `index` source re-queries every known
 * server each QUERY_INTERVAL_MS while the master is listed on its own. Both scale with N: the interval is
 * 300 s x N / 100,000, so N servers listed at the real pace stand for 100,000 listed every ~15 min and queried
 * every 5. Reports the listing time and the interval servers actually get (gaps between one server's samples).
 */
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import type { BenchOptions } from "../lib/args";
import { connect, createBenchDb } from "../lib/bench-db";
import { crawlerEnv } from "../lib/crawler-env";
import { RUN_OCTET, spawnService, spawnNode, stopChild } from "../lib/child";
import { num, seconds, table, type PartResult, type Verdict } from "../lib/report";
import { ANSWERING_MIX, startSimulator } from "../lib/simulator";
import { deleteRedisPrefix } from "../../src/shared/redis-prefix";
import { REAL_MASTER_RATE_LIMIT, startSimValveMaster } from "../../src/simulator/master";

const SERVERS_PER_PROCESS = 10_000;
const ADDRESSES_PER_PAGE = 231;
/** Just under the master's 30 a minute, so a listing never spends the budget and falls silent. */
const REQUESTS_PER_MINUTE = 29;
/** Complete listings of the master to wait for: the first discovers the fleet, the next ones only list. */
const LISTINGS = 3;
const DEADLINE_MS = 30 * 60_000;

function uptime(): string {
  try {
    return execFileSync("uptime", { encoding: "utf8" }).trim();
  } catch {
    return `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}`;
  }
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0
    ? NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN);

interface Listing {
  startedAt: Date;
  listedMs: number;
  closedMs: number;
  listed: number;
  queried: number;
  partial: boolean;
}

export async function runCadencePart(
  options: BenchOptions,
  outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = Date.now();
  const count = options.cadenceServers;
  const intervalMs = Math.max(5000, Math.round((300_000 * count) / 100_000));
  const processes = Math.max(1, Math.ceil(count / SERVERS_PER_PROCESS));
  const hosts = Array.from({ length: processes }, (_v, i) => `127.89.${RUN_OCTET}.${i + 1}`);
  const uptimeBefore = uptime();
  const db = await createBenchDb("cadence");
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `gsbenchcadence${process.pid}`;
  log(`cadence ${num(count)}: starting ${processes} simulator process(es)`);
  const sim = await startSimulator({
    servers: count,
    processes,
    hosts,
    basePort: 20000,
    mix: ANSWERING_MIX,
    jsonOut: path.join(outDir, `cadence-fleet-${count}.json`),
  });
  const master = await startSimValveMaster({
    fleet: sim.specs,
    rateLimit: REAL_MASTER_RATE_LIMIT,
    addressesPerPacket: ADDRESSES_PER_PAGE,
    host: "127.0.0.1",
    port: 0,
  });
  const c = await connect(db.url);
  let crawler: ReturnType<typeof spawnNode> | null = null;
  try {
    const env = crawlerEnv(
      {
        databaseUrl: db.url,
        redisUrl,
        prefix,
        // The master is listed again as soon as its previous listing closed (ticks meanwhile are skipped).
        master: {
          name: "bench-master",
          host: master.address.host,
          port: master.address.port,
          regions: [0xff],
          intervalMs,
          options: { requestsPerMinute: REQUESTS_PER_MINUTE },
        },
      },
      {
        QUERY_FROM_INDEX: "1",
        QUERY_INTERVAL_MS: String(intervalMs),
        LIST_TIMEOUT_MS: String(DEADLINE_MS),
        FARM_RULE_EXEMPT_RANGES: "127.0.0.0/8",
      },
    );
    log(
      `cadence ${num(count)}: starting the crawler (QUERY_FROM_INDEX=1, QUERY_INTERVAL_MS=${intervalMs})`,
    );
    const t0 = performance.now();
    crawler = spawnService(["serve", "--role", "scheduler", "--role", "worker"], {
      env,
      raiseFileLimit: true,
    });
    crawler.stdout?.resume();
    let stderrTail = "";
    crawler.stderr?.on(
      "data",
      (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString()).slice(-4000)),
    );
    let lastLog = 0;
    let listings = 0;
    while (performance.now() - t0 < DEADLINE_MS) {
      await new Promise((r) => setTimeout(r, 2000));
      if (crawler.exitCode !== null)
        throw new Error(`the crawler exited (${crawler.exitCode}): ${stderrTail}`);
      const row = (
        await c.query<{ n: string; q: string }>(
          `SELECT (SELECT count(*) FROM crawl c JOIN master_source s ON s.id = c.source_id WHERE s.name = 'bench-master' AND c.finished_at IS NOT NULL AND NOT c.partial)::text AS n,
                  (SELECT count(*) FROM crawl c JOIN master_source s ON s.id = c.source_id WHERE s.kind = 'INDEX' AND c.finished_at IS NOT NULL)::text AS q`,
        )
      ).rows[0];
      listings = Number(row?.n ?? 0);
      if (listings >= LISTINGS) break;
      if (performance.now() - lastLog > 30_000) {
        lastLog = performance.now();
        log(
          `cadence ${num(count)}: ${listings} complete listing(s), ${row?.q ?? 0} index crawl(s) after ${seconds(performance.now() - t0, 0)}`,
        );
      }
    }
    const wallMs = performance.now() - t0;
    await stopChild(crawler, 20_000);
    crawler = null;

    const listingRows = (
      await c.query<{
        started_at: Date;
        listed_ms: string;
        closed_ms: string;
        listed: number;
        queried: number;
        partial: boolean;
      }>(
        `SELECT c.started_at, extract(epoch FROM (max(r.finished_at) - c.started_at)) * 1000 AS listed_ms,
                extract(epoch FROM (c.finished_at - c.started_at)) * 1000 AS closed_ms, c.listed, c.queried, c.partial
         FROM crawl c JOIN master_source s ON s.id = c.source_id JOIN crawl_run r ON r.crawl_id = c.id
         WHERE s.name = 'bench-master' AND c.finished_at IS NOT NULL GROUP BY c.id ORDER BY c.started_at`,
      )
    ).rows;
    const listingsDone: Listing[] = listingRows.map((r) => ({
      startedAt: r.started_at,
      listedMs: Number(r.listed_ms),
      closedMs: Number(r.closed_ms),
      listed: r.listed,
      queried: r.queried,
      partial: r.partial,
    }));
    const firstClosed = listingsDone[0]
      ? new Date(listingsDone[0].startedAt.getTime() + listingsDone[0].closedMs)
      : new Date();
    // Steady state: after the first listing closed (its first queries are stamped with that listing's start).
    const gaps = (
      await c.query<{ gap_ms: string }>(
        `SELECT extract(epoch FROM (crawl_at - prev)) * 1000 AS gap_ms FROM (
           SELECT crawl_at, lag(crawl_at) OVER (PARTITION BY game_server_id ORDER BY crawl_at) AS prev FROM server_sample_range($1, 'infinity')) x
         WHERE prev IS NOT NULL`,
        [firstClosed],
      )
    ).rows
      .map((r) => Number(r.gap_ms))
      .sort((a, b) => a - b);
    const perServer = (
      await c.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM server_sample_range($1, 'infinity') GROUP BY game_server_id`,
        [firstClosed],
      )
    ).rows.map((r) => Number(r.n));
    const indexCrawls = (
      await c.query<{ ms: string; listed: number; queried: number }>(
        `SELECT extract(epoch FROM (c.finished_at - c.started_at)) * 1000 AS ms, c.listed, c.queried FROM crawl c JOIN master_source s ON s.id = c.source_id
         WHERE s.kind = 'INDEX' AND c.finished_at IS NOT NULL AND c.started_at >= $1 ORDER BY c.started_at`,
        [firstClosed],
      )
    ).rows;
    const indexMs = indexCrawls.map((r) => Number(r.ms)).sort((a, b) => a - b);
    const steadyListings = listingsDone.slice(1).filter((l) => !l.partial);
    const listingMs =
      steadyListings.length > 0
        ? steadyListings.reduce((a, l) => a + l.listedMs, 0) / steadyListings.length
        : (listingsDone[0]?.listedMs ?? NaN);
    const median = percentile(gaps, 0.5);
    const p95 = percentile(gaps, 0.95);
    const uptimeAfter = uptime();
    const scale = 100_000 / count;
    const verdicts: Verdict[] = [
      {
        what: `query interval servers get (median) with QUERY_INTERVAL_MS ${seconds(intervalMs, 0)}, listing at the master's pace`,
        target: `<= 1.2x the interval (${seconds(intervalMs * 1.2, 0)})`,
        measured: `${seconds(median, 1)} (p95 ${seconds(p95, 1)})`,
        met: gaps.length > 0 ? median <= intervalMs * 1.2 : null,
        gap: `${num(median / intervalMs, 2)}x the interval`,
      },
    ];
    const markdown = [
      `${num(count)} simulated servers (every one answering; \`gsindex simulate\` on 127.89.r.x) behind the simulated Valve master at its real rate limit ` +
        `(${REAL_MASTER_RATE_LIMIT.packetsPerWindow} packets a minute, then a minute of silence; ${ADDRESSES_PER_PAGE} addresses a packet; region 0xFF, the whole list), listed by the service at ${REQUESTS_PER_MINUTE} requests a minute. ` +
        `The crawler is \`gsindex serve --role scheduler --role worker\` with \`QUERY_FROM_INDEX=1\` and \`QUERY_INTERVAL_MS=${intervalMs}\`: ` +
        `the interval is 300 s x ${num(count)} / 100,000, so this fleet is ${num(100 / scale, 0)} % of 100,000 servers, listed at the same pace per server, with the same ratio of listing time to query interval as 100,000 servers queried every 5 min. ` +
        `The run waited for ${LISTINGS} complete listings (${seconds(wallMs, 0)}); gaps are between consecutive samples (\`server_sample.crawl_at\`) of each server after the first listing closed.`,
      "",
      table(
        ["", "measured", "for 100,000 servers (x" + num(scale, 0) + ")"],
        [
          [
            "listing the master (first listing: discovery, queries the new servers)",
            listingsDone[0]
              ? `${seconds(listingsDone[0].listedMs, 0)} listed, closed after ${seconds(listingsDone[0].closedMs, 0)} (${num(listingsDone[0].queried)} queried)`
              : "n/a",
            listingsDone[0] ? seconds(listingsDone[0].listedMs * scale, 0) : "n/a",
          ],
          [
            `listing the master (next listings, listing only: ${steadyListings.map((l) => `${num(l.queried)} queried`).join(", ")})`,
            `**${seconds(listingMs, 0)}** (${steadyListings.map((l) => seconds(l.listedMs, 0)).join(", ")})`,
            `${seconds(listingMs * scale, 0)} (${num((listingMs * scale) / 60_000, 1)} min)`,
          ],
          [
            "query interval (QUERY_INTERVAL_MS)",
            seconds(intervalMs, 0),
            seconds(intervalMs * scale, 0),
          ],
          [
            "interval servers got: median / p95 / max",
            `**${seconds(median, 1)} / ${seconds(p95, 1)}** / ${seconds(gaps[gaps.length - 1] ?? NaN, 1)} (${num(gaps.length)} gaps)`,
            `${seconds(median * scale, 0)} / ${seconds(p95 * scale, 0)}`,
          ],
          [
            "samples per server after the first listing: min / median / max",
            `${num(Math.min(...perServer))} / ${num(
              percentile(
                [...perServer].sort((a, b) => a - b),
                0.5,
              ),
            )} / ${num(Math.max(...perServer))} over ${num(perServer.length)} servers`,
            "",
          ],
          [
            "index crawls after the first listing: count, duration median / max",
            `${num(indexCrawls.length)}, ${seconds(percentile(indexMs, 0.5), 1)} / ${seconds(indexMs[indexMs.length - 1] ?? NaN, 1)} (each queried ${[...new Set(indexCrawls.map((r) => r.queried))].map((n) => num(n)).join(" or ")})`,
            "",
          ],
        ],
      ),
      "",
      ...verdicts.map(
        (v) =>
          `Target: ${v.what} ${v.target}: **${v.measured}**, ${v.met === null ? "not measured" : v.met ? "met" : "missed"}.`,
      ),
      "",
      `Without \`QUERY_FROM_INDEX\` a server is queried once per crawl of its source, and one crawl opens only after the previous one closed, so its interval is at least the listing time: ${seconds(listingMs, 0)} here, ${num((listingMs * scale) / 60_000, 1)} min at 100,000 servers, against ${seconds(intervalMs, 0)} and 5 min with it. ` +
        "The 100,000-server crawl of the End-to-end crawl section lists from an unpaced master (rate limit off), which hides this: against Valve's master its listing alone takes the time above.",
      "",
      `Machine (shared and loaded): \`uptime\` before: ${uptimeBefore}; after: ${uptimeAfter}.`,
    ].join("\n");
    return {
      id: "cadence",
      title: "Cadence at the master's pace",
      markdown,
      commands: [`npm run bench -- --only cadence --cadence-servers ${count}`],
      verdicts,
      data: {
        count,
        intervalMs,
        listings: listingsDone,
        gaps: { n: gaps.length, median, p95, max: gaps[gaps.length - 1] },
        indexCrawls,
        uptimeBefore,
        uptimeAfter,
        wallMs,
      },
      wallMs: Date.now() - started,
    };
  } finally {
    if (crawler) await stopChild(crawler, 20_000);
    await c.end().catch(() => undefined);
    await master.close();
    await sim.stop();
    await deleteRedisPrefix(redisUrl, prefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}
