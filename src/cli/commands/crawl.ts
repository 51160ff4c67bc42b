/**
 * `gsindex crawl --once [--source ID|NAME] [--master HOST:PORT] [--simulate N] [--json]`: one crawl in
 * the foreground (no Redis needed), a progress line on standard error, the totals at the end.
 */
import { runCrawlOnce, type CrawlProgress } from "../../crawler/crawl-once";
import { upsertConfiguredSources } from "../../crawler/scheduler";
import { migrate } from "../../migrate";
import { applyMemorySettings } from "../../service/v8-memory";
import { loadConfig, type AllowEntry, type Config } from "../../shared/config";
import { createDb, type Db } from "../../shared/db";
import { createLogger } from "../../shared/logger";
import { startFleet, type RunningFleet } from "../../simulator/fleet";
import { makeFleet } from "../../simulator/make-fleet";
import { startSimValveMaster, type SimValveMaster } from "../../simulator/master";
import { defineCommand } from "../define-command";
import { parseHostPort, processIo, type CommandIo } from "./io";

const command = defineCommand({
  name: "crawl",
  usage: `usage: gsindex crawl --once [--source ID|NAME] [--master HOST:PORT [--rate N]] [--simulate N] [--json]

Runs one crawl in the foreground and exits (PostgreSQL needed, Redis not).
  --source ID|NAME  crawl this source only (default: every enabled source, one after another;
                    'index' queries every known server without listing)
  --master H:P      crawl this Valve master (added as source 'master-<host>-<port>')
  --rate N          requests per minute to that master (default 20; 0 = unpaced, simulators only)
  --simulate N      start N simulated servers and a simulated master on loopback and crawl them
                    (loopback is allow-listed for this run only)
  --json            totals as JSON on standard output
Sources come from MASTER_SOURCES and the database; see also ADDRESS_ALLOW_LIST.`,
  options: {
    once: { type: "boolean" },
    source: { type: "string" },
    master: { type: "string" },
    rate: { type: "string" },
    simulate: { type: "string" },
    json: { type: "boolean" },
  },
});

function progressLine(name: string, p: CrawlProgress): string {
  const seconds = p.elapsedMs / 1000;
  const rate = seconds > 0 ? Math.round(p.queried / seconds) : 0;
  return `${name}: listed ${p.listed} · queried ${p.queried} · answered ${p.answered} · failed ${p.failed} · written ${p.written} · ${rate}/s · ${seconds.toFixed(1)}s`;
}

async function sourceNamed(
  db: Db,
  name: string,
  kind: "VALVE_UDP",
  host: string,
  port: number,
  options: Record<string, number>,
): Promise<number> {
  const s = await db.masterSource.upsert({
    where: { name },
    create: { name, kind, host, port, options },
    update: { kind, host, port, options, enabled: true },
  });
  return s.id;
}

export async function run(argv: string[], io: CommandIo = processIo): Promise<number> {
  const args = command.parse(argv, io);
  if (typeof args === "number") return args;
  const { values } = args;
  if (!values.once) {
    io.stderr.write(
      `gsindex crawl: only --once is supported here; scheduled crawls run under 'gsindex serve'\n${command.usage}\n`,
    );
    return 2;
  }
  const simulate = values.simulate === undefined ? 0 : Number(values.simulate);
  if (!Number.isInteger(simulate) || simulate < 0 || simulate > 60_000) {
    io.stderr.write("gsindex crawl: --simulate must be a whole number of servers (0-60000)\n");
    return 2;
  }
  const rate = values.rate === undefined ? 20 : Number(values.rate);
  if (!Number.isFinite(rate) || rate < 0) {
    io.stderr.write("gsindex crawl: --rate must be a number >= 0\n");
    return 2;
  }

  let config: Config = loadConfig();
  const logger = createLogger(
    config.logLevel === "info" ? "warn" : config.logLevel,
    "gsindex-crawl",
  );
  // A crawl of a whole master holds as much as the service's crawler: the same memory settings.
  applyMemorySettings(config, logger);
  if (simulate > 0) {
    const loopback = loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" })
      .addressAllowList as AllowEntry[];
    config = Object.freeze({
      ...config,
      addressAllowList: [...config.addressAllowList, ...loopback],
    });
  }
  if (config.migrateOnStart) await migrate(config.databaseUrl);
  const db = createDb(config.databaseUrl);
  let fleet: RunningFleet | null = null;
  let master: SimValveMaster | null = null;
  try {
    await upsertConfiguredSources(db, config.masterSources, config.crawlIntervalMs);
    let sourceIds: number[];
    if (simulate > 0) {
      fleet = await startFleet(makeFleet({ count: simulate, seed: 1, basePort: 0 }));
      master = await startSimValveMaster({ fleet: fleet.specs, rateLimit: false });
      io.stderr.write(
        `simulated ${fleet.specs.length} servers, master at ${master.address.host}:${master.address.port}\n`,
      );
      sourceIds = [
        await sourceNamed(
          db,
          "simulated-master",
          "VALVE_UDP",
          master.address.host,
          master.address.port,
          { requestsPerMinute: 0 },
        ),
      ];
    } else if (values.master !== undefined) {
      const hp = parseHostPort(values.master, 27011);
      const name = `master-${hp.host.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${hp.port}`.slice(
        0,
        63,
      );
      sourceIds = [
        await sourceNamed(db, name, "VALVE_UDP", hp.host, hp.port, { requestsPerMinute: rate }),
      ];
    } else if (values.source !== undefined) {
      const key = values.source;
      const s = /^\d+$/.test(key)
        ? await db.masterSource.findUnique({ where: { id: Number(key) } })
        : await db.masterSource.findUnique({ where: { name: key } });
      if (!s) {
        io.stderr.write(`gsindex crawl: no source ${JSON.stringify(key)}\n`);
        return 2;
      }
      sourceIds = [s.id];
    } else {
      // The index source (`--source index` queries every known server) would query each server twice.
      const listing = await db.masterSource.findMany({
        where: { enabled: true, kind: { not: "INDEX" } },
        orderBy: { id: "asc" },
      });
      sourceIds = listing.map((s) => s.id);
      if (sourceIds.length === 0) {
        io.stderr.write(
          "gsindex crawl: no sources (set MASTER_SOURCES, or use --master / --simulate)\n",
        );
        return 2;
      }
    }
    const results: (CrawlProgress & { source: string })[] = [];
    for (const sourceId of sourceIds) {
      const source = await db.masterSource.findUniqueOrThrow({ where: { id: sourceId } });
      const tty = process.stderr.isTTY === true;
      let lastLineMs = 0;
      const totals = await runCrawlOnce({
        config,
        db,
        logger,
        sourceId,
        progressIntervalMs: 500,
        onProgress: (p) => {
          if (p.finished) return;
          if (tty) io.stderr.write(`\r${progressLine(source.name, p)}\u001b[K`);
          else if (p.elapsedMs - lastLineMs >= 2000) {
            lastLineMs = p.elapsedMs;
            io.stderr.write(progressLine(source.name, p) + "\n");
          }
        },
      });
      if (tty) io.stderr.write("\r\u001b[K");
      io.stderr.write(progressLine(source.name, totals) + "\n");
      results.push({ ...totals, source: source.name });
      const summary =
        `${source.name} crawl ${totals.key}: ${totals.listed} listed, ${totals.queried} queried, ${totals.answered} answered, ` +
        `${totals.failed} failed, ${totals.written} samples written${totals.partial ? ", listing PARTIAL" : ""}` +
        ((totals.notQueryable ?? 0) > 0
          ? `, ${totals.notQueryable} not queryable by the address policy (see ADDRESS_ALLOW_LIST)`
          : "") +
        ` in ${(totals.elapsedMs / 1000).toFixed(1)}s`;
      if (!values.json) io.stdout.write(summary + "\n");
    }
    if (values.json) io.stdout.write(JSON.stringify(results) + "\n");
    return results.every((r) => r.finished) ? 0 : 1;
  } finally {
    await master?.close();
    await fleet?.stop();
    await db.$disconnect();
  }
}
