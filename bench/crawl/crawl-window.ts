/**
 * One crawl of the crawl part measured from its start to its crawl row closed (every listing run and query
 * batch written, states and samples committed): the discovery crawl the scheduler starts on a fresh
 * database, and the steady crawl started after it on the same crawler. Both go through these meters, so
 * their figures compare.
 */
import { readFileSync } from "node:fs";
import type { Client } from "pg";
import { CpuMeter, cpuMsByName, cpuMsOf, machineBusyMs, treePids } from "../lib/procs";
import { seconds } from "../lib/report";

export interface CrawlWindow {
  finished: boolean;
  wallMs: number;
  /** The crawl row's own started_at to finished_at. */
  dbMs: number;
  listed: number;
  queried: number;
  answered: number;
  failed: number;
  written: number;
  crawlerCpuMs: number;
  simulatorCpuMs: number;
  /** Every postgres process of the machine. */
  postgresCpuMs: number;
  redisCpuMs: number;
  /** All busy CPU of the machine's cores, other work on it included. */
  machineCpuMs: number;
  /** UDP datagrams the kernel dropped on this machine during the crawl because a receive buffer was full. */
  udpRcvbufErrors: number;
}

export interface CrawlRow {
  id: string;
  key: string;
  started_at: Date;
  finished_at: Date | null;
  listed: number;
  queried: number;
  answered: number;
  failed: number;
  written: number;
}

type CrawlCpu = Pick<
  CrawlWindow,
  | "crawlerCpuMs"
  | "simulatorCpuMs"
  | "postgresCpuMs"
  | "redisCpuMs"
  | "machineCpuMs"
  | "udpRcvbufErrors"
>;

/** The kernel's UDP counters (all sockets of the machine): datagrams dropped for a full receive buffer. */
function udpCounters(): { inErrors: number; rcvbufErrors: number } {
  const lines = readFileSync("/proc/net/snmp", "utf8")
    .split("\n")
    .filter((l) => l.startsWith("Udp:"));
  const names = (lines[0] ?? "").split(/\s+/).slice(1);
  const values = (lines[1] ?? "").split(/\s+/).slice(1).map(Number);
  const get = (name: string): number => values[names.indexOf(name)] ?? 0;
  return { inErrors: get("InErrors"), rcvbufErrors: get("RcvbufErrors") };
}

/** CPU of the crawler, the fleet, PostgreSQL and Redis, the machine's busy CPU and UDP drops, from now on. */
export class CrawlMeters {
  private readonly crawlerBeforeMs: number;
  private readonly simulator: CpuMeter;
  private readonly postgres = new CpuMeter(() => cpuMsByName("postgres").pids);
  private readonly redis = new CpuMeter(() => cpuMsByName("redis-server").pids);
  private readonly machineBeforeMs = machineBusyMs();
  private readonly udpBefore = udpCounters();

  /** `crawlerPid` null: the crawler starts after this, so all of its CPU counts. */
  constructor(simPids: number[], crawlerPid: number | null) {
    this.simulator = new CpuMeter(() => simPids);
    this.crawlerBeforeMs = crawlerPid === null ? 0 : cpuMsOf(treePids(crawlerPid));
  }

  /** Now and then, so postgres backends that exit meanwhile still count up to their last sample. */
  sample(): void {
    this.simulator.sample();
    this.postgres.sample();
    this.redis.sample();
  }

  read(crawlerPid: number): CrawlCpu {
    return {
      crawlerCpuMs: cpuMsOf(treePids(crawlerPid)) - this.crawlerBeforeMs,
      simulatorCpuMs: this.simulator.usedMs(),
      postgresCpuMs: this.postgres.usedMs(),
      redisCpuMs: this.redis.usedMs(),
      machineCpuMs: machineBusyMs() - this.machineBeforeMs,
      udpRcvbufErrors: udpCounters().rcvbufErrors - this.udpBefore.rcvbufErrors,
    };
  }
}

const POLL_MS = 250;
const PROGRESS_LOG_MS = 10_000;

/**
 * Polls the first crawl of source `sourceName` after crawl `afterId` until its row is closed or `deadlineMs`
 * has passed since `startedMs`; `onPoll` (the meters, the crawler's health) runs after each look. Returns the
 * crawl's last row, none if it never started. By source, because with QUERY_FROM_INDEX the scheduler also
 * opens a crawl of the `index` source when it starts, next to the master's: the first crawl row may be either.
 */
export async function untilCrawlCloses(
  c: Client,
  afterId: string,
  sourceName: string,
  startedMs: number,
  deadlineMs: number,
  onPoll: (row: CrawlRow | undefined) => void,
  log: (line: string) => void,
): Promise<CrawlRow | undefined> {
  let row: CrawlRow | undefined;
  let lastLogMs = 0;
  while (performance.now() - startedMs < deadlineMs) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    row = (
      await c.query<CrawlRow>(
        `SELECT c.id::text, c.key, c.started_at, c.finished_at, c.listed, c.queried, c.answered, c.failed, c.written
         FROM crawl c JOIN master_source s ON s.id = c.source_id WHERE c.id > $1 AND s.name = $2 ORDER BY c.id LIMIT 1`,
        [afterId, sourceName],
      )
    ).rows[0];
    onPoll(row);
    if (row?.finished_at) break;
    if (performance.now() - lastLogMs > PROGRESS_LOG_MS) {
      lastLogMs = performance.now();
      log(
        `${row ? `listed ${row.listed}, queried ${row.queried}, written ${row.written}` : "no crawl yet"} after ${seconds(performance.now() - startedMs, 0)}`,
      );
    }
  }
  return row;
}

/** The window's figures from the crawl's last row, its wall time and its meters. */
export function windowOf(row: CrawlRow | undefined, wallMs: number, cpu: CrawlCpu): CrawlWindow {
  return {
    finished: row?.finished_at != null,
    wallMs,
    dbMs: row?.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : NaN,
    listed: row?.listed ?? 0,
    queried: row?.queried ?? 0,
    answered: row?.answered ?? 0,
    failed: row?.failed ?? 0,
    written: row?.written ?? 0,
    ...cpu,
  };
}
