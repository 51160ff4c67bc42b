/**
 * The queue backends side by side: the end-to-end crawl of part 3 (crawl-part.ts) with the crawl
 * queues on Redis and on BullMQ's PostgreSQL backend (QUEUE_BACKEND), for each fleet size in the same
 * run, alternately (Redis first, then PostgreSQL, per size), so both see the same machine.
 */
import type { BenchOptions } from "../lib/args";
import { mib, num, seconds, table, type PartResult, type Verdict } from "../lib/report";
import { BATCH_SIZE, crawlOnce, type CrawlRun } from "./crawl-part";

const BACKENDS = ["redis", "postgres"] as const;
/**
 * With the default batches (QUERY_BATCH_SIZE) a crawl of 10,000 is only a few dozen jobs, which hardly
 * tests a queue: the smallest fleet is crawled again in batches of this many (1,000 query jobs per 10,000).
 */
const SMALL_BATCH = 10;

export async function runQueueBackendPart(
  options: BenchOptions,
  outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = Date.now();
  const runs: Array<{ backend: (typeof BACKENDS)[number]; run: CrawlRun }> = [];
  const sizes = [
    ...options.crawlFleets.map((count) => ({ count, batch: null as number | null })),
    { count: Math.min(...options.crawlFleets), batch: SMALL_BATCH },
  ];
  for (const { count, batch } of sizes) {
    for (const backend of BACKENDS) {
      const run = await crawlOnce(count, outDir, log, null, {
        QUEUE_BACKEND: backend,
        ...(batch === null ? {} : { QUERY_BATCH_SIZE: String(batch) }),
      });
      log(
        `queues on ${backend}, crawl ${num(count)}${batch === null ? "" : ` in batches of ${batch}`}: ${run.finished ? "finished" : "NOT finished"} in ${seconds(run.wallMs)}, ${num(run.failedAttempts)} failed job attempts`,
      );
      runs.push({ backend, run });
    }
  }
  const rows = runs.map(({ backend, run: r }) => [
    `${num(r.servers)}${r.settings.QUERY_BATCH_SIZE ? ` (batches of ${r.settings.QUERY_BATCH_SIZE})` : ""}`,
    backend === "redis" ? "Redis" : "PostgreSQL",
    r.finished ? `**${seconds(r.wallMs, 1)}**` : `not finished after ${seconds(r.wallMs, 0)}`,
    num(r.servers / (r.wallMs / 1000)),
    seconds(r.crawlerCpuMs, 1),
    seconds(r.postgresCpuMs, 1),
    backend === "redis" ? seconds(r.redisCpuMs, 1) : `${seconds(r.redisCpuMs, 1)} (not used)`,
    `${seconds(r.machineCpuMs, 1)} of ${seconds(r.wallMs * 2, 1)}`,
    num(r.failedAttempts),
    `${num(r.written)} written, ${num(r.answered)} answered`,
    mib(r.crawlerPeakRssBytes),
  ]);
  const verdicts: Verdict[] = sizes.map(({ count, batch }) => {
    const of = (backend: string) =>
      runs.find(
        (x) =>
          x.backend === backend &&
          x.run.servers === count &&
          (x.run.settings.QUERY_BATCH_SIZE ?? null) === (batch === null ? null : String(batch)),
      )?.run;
    const redis = of("redis");
    const pg = of("postgres");
    const ratio = redis && pg ? pg.wallMs / redis.wallMs : NaN;
    return {
      what: `crawl of ${num(count)} servers${batch === null ? "" : ` in batches of ${batch}`}, queues on PostgreSQL against Redis`,
      target: "finishes, every server written, no failed job attempt",
      measured: pg
        ? `${pg.finished ? seconds(pg.wallMs, 1) : "not finished"} (${num(ratio, 2)}x Redis), ${num(pg.failedAttempts)} failed attempts`
        : "n/a",
      met: pg ? pg.finished && pg.written === pg.servers && pg.failedAttempts === 0 : null,
      gap:
        pg && !pg.finished ? "did not finish" : `${num(pg?.failedAttempts ?? NaN)} failed attempts`,
    };
  });
  const markdown = [
    'The crawl of the "End-to-end crawl" part (the same fleet, master, fresh database and `gsindex serve --role scheduler --role worker` with default settings), ' +
      "once with `QUEUE_BACKEND=redis` (the shared Redis, a fresh key prefix) and once with `QUEUE_BACKEND=postgres` (BullMQ's PostgreSQL backend in the schema `<prefix>_queue` of the same fresh database), per fleet size, one after the other. " +
      "CPU columns are CPU seconds used during the crawl by the crawler process, every PostgreSQL process on the machine (the queue and the index on PostgreSQL; only the index on Redis) and redis-server. " +
      'Failed job attempts are the "job failed" lines of the crawler\'s log (a job that threw and was retried, or gave up). ' +
      `Batches of ${num(BATCH_SIZE)} servers (the default) make a crawl of 10,000 about ${num(Math.ceil(10_000 / BATCH_SIZE))} jobs, too few to test a queue, so the smallest fleet is crawled again with \`QUERY_BATCH_SIZE=${SMALL_BATCH}\` (1,000 query jobs per 10,000 servers). ` +
      "PostgreSQL CPU counts every PostgreSQL process on the machine, so other work on the shared server shows there too.",
    "",
    table(
      [
        "servers",
        "queues on",
        "wall",
        "servers/s",
        "crawler CPU",
        "PostgreSQL CPU",
        "Redis CPU",
        "machine CPU",
        "failed job attempts",
        "outcome",
        "crawler peak RSS",
      ],
      rows,
    ),
    "",
    ...verdicts.map((v) => `${v.what}: **${v.measured}**.`),
  ].join("\n");
  return {
    id: "queue",
    title: "Queue backends: Redis and PostgreSQL",
    markdown,
    commands: [
      `npm run bench -- --only queue --crawl-fleets ${options.crawlFleets.join(",")} --no-profile`,
    ],
    verdicts,
    data: { runs },
    wallMs: Date.now() - started,
  };
}
