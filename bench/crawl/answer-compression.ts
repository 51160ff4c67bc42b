/**
 * `node dist-bench/bench/crawl/answer-compression.js [--servers 50000] [--rounds 3]`: what compressing an answer's
 * large values costs PostgreSQL in the crawl's write, with pglz (PostgreSQL's default) and with LZ4 (migration
 * 20261206000000_game_server_answer_lz4). docs/BENCHMARKS-history.md, 2026-12-06, has the figures.
 *
 * Per round and method, on a fresh database: the simulated fleet listed, its first answers written with the crawl's
 * own writeBatchOutcomes (a discovery: every value new), then a second crawl's answers with every player's time moved
 * on (a populated server's list changes with every answer; its rules are kept by their digest). One pool connection:
 * its backend's CPU is read from /proc around each crawl's writes.
 */
import { parseArgs } from "node:util";
import { listRuns, openCrawl } from "../../src/crawler/store/crawl-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import { recordListing, writeBatchOutcomes } from "../../src/crawler/store/server-store";
import type { ServerStatus } from "../../src/protocol";
import { createDb, type Db } from "../../src/shared/db";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { makeFleet } from "../../src/simulator/make-fleet";
import { connect, createBenchDb } from "../lib/bench-db";
import { procCpuMs } from "../lib/simulator";
import { simulatedListingRow, simulatedStatusOf } from "../lib/simulated-answer";

const BATCH_SIZE = 250;
const HOSTS = 250;
const COLUMNS = ["rules", "player_list", "raw", "player_names"];
/** How far each player's time moves on between the two crawls: a 5-minute cadence. */
const CRAWL_INTERVAL_SECONDS = 300;

const METHODS = [
  { label: "pglz (PostgreSQL's default)", method: "default" },
  { label: "LZ4 (as migrated)", method: "lz4" },
];

/** One crawl's listing and answers; returns the backend's CPU for the answers' writes alone. */
async function crawlOnce(
  db: Db,
  o: { sourceId: number; key: string; specs: SimServerSpec[]; backendPid: number },
  answerOf: (address: string, queryPort: number) => ServerStatus,
): Promise<number> {
  const crawl = await openCrawl(db, {
    key: o.key,
    sourceId: o.sourceId,
    startedAt: new Date(),
    splits: [{ region: 0, split: "" }],
  });
  await ensureSamplePartition(db, crawl.startedAt);
  const [run] = await listRuns(db, crawl.id);
  if (!run) throw new Error(`crawl ${o.key} has no run`);
  await recordListing(db, {
    crawlId: crawl.id,
    crawlAt: crawl.startedAt,
    runId: run.id,
    sourceId: o.sourceId,
    label: "r0",
    batchSize: BATCH_SIZE,
    partial: false,
    error: null,
    rows: o.specs.map(simulatedListingRow),
    deferListedAt: true,
  });
  const servers = new Map(
    (
      await db.$queryRawUnsafe<{ id: bigint; address: string; query_port: number }[]>(
        "SELECT id, address, query_port FROM game_server",
      )
    ).map((r) => [Number(r.id), answerOf(r.address, r.query_port)]),
  );
  const batches = await db.$queryRawUnsafe<{ batch_key: string; server_ids: bigint[] }[]>(
    "SELECT batch_key, server_ids FROM crawl_batch WHERE crawl_id = $1 ORDER BY batch_key",
    crawl.id,
  );
  const before = procCpuMs(o.backendPid);
  for (const b of batches) {
    await writeBatchOutcomes(db, {
      crawlId: crawl.id,
      crawlAt: crawl.startedAt,
      batchKey: b.batch_key,
      offlineAfterFailures: 2,
      outcomes: b.server_ids.map((raw) => {
        const serverId = Number(raw);
        const status = servers.get(serverId);
        if (!status) throw new Error(`no answer for server ${serverId}`);
        return { serverId, kind: "answered" as const, status, pingMs: status.pingMs };
      }),
    });
  }
  return procCpuMs(o.backendPid) - before;
}

async function measure(
  specs: SimServerSpec[],
  method: string,
): Promise<{ firstMs: number; nextMs: number; tableBytes: number }> {
  const bench = await createBenchDb("answer_compression");
  const admin = await connect(bench.url);
  try {
    const [lz4] = (
      await admin.query<{ lz4: boolean }>(
        "SELECT 'lz4' = ANY (enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'",
      )
    ).rows;
    if (!lz4?.lz4) throw new Error("this PostgreSQL has no LZ4 (built without --with-lz4)");
    await admin.query(
      `ALTER TABLE game_server ${COLUMNS.map((c) => `ALTER COLUMN ${c} SET COMPRESSION ${method}`).join(", ")}`,
    );
  } finally {
    await admin.end();
  }
  const db = createDb(bench.url, { max: 1 });
  try {
    await db.$executeRawUnsafe(
      `INSERT INTO master_source (name, kind, host, updated_at) VALUES ('answers', 'ADDRESS_LIST', '127.0.0.1', now())`,
    );
    const [source] = await db.$queryRawUnsafe<{ id: number }[]>(
      "SELECT id FROM master_source WHERE name = 'answers'",
    );
    const [backend] = await db.$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid");
    if (!source || !backend) throw new Error("no source or no backend");
    const answers = new Map(specs.map((s) => [`${s.host}:${s.queryPort}`, simulatedStatusOf(s)]));
    const answerOf = (address: string, queryPort: number): ServerStatus => {
      const status = answers.get(`${address}:${queryPort}`);
      if (!status) throw new Error(`no answer for ${address}:${queryPort}`);
      return status;
    };
    const o = { sourceId: source.id, specs, backendPid: backend.pid };
    const firstMs = await crawlOnce(db, { ...o, key: "first" }, answerOf);
    for (const status of answers.values())
      status.playerList = status.playerList.map((p) => ({
        ...p,
        durationSeconds: (p.durationSeconds ?? 0) + CRAWL_INTERVAL_SECONDS,
      }));
    const nextMs = await crawlOnce(db, { ...o, key: "next" }, answerOf);
    const [size] = await db.$queryRawUnsafe<{ bytes: bigint }[]>(
      "SELECT pg_total_relation_size('game_server') AS bytes",
    );
    return { firstMs, nextMs, tableBytes: Number(size?.bytes ?? 0) };
  } finally {
    await db.$disconnect();
    await bench.drop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { servers: { type: "string" }, rounds: { type: "string" } },
  });
  const servers = Number(values.servers ?? 50_000);
  const rounds = Number(values.rounds ?? 3);
  const specs = makeFleet({
    count: servers,
    seed: 1,
    hosts: Array.from({ length: HOSTS }, (_, i) => `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`),
  });
  const us = (ms: number): string => ((1000 * ms) / servers).toFixed(1);
  console.log(
    `${servers} servers in batches of ${BATCH_SIZE}; PostgreSQL backend CPU per server: first answers, the next crawl's answers (players' times moved on)`,
  );
  for (let round = 1; round <= rounds; round++) {
    // Alternated (AB, BA, ...), so that neither method always runs on the warmer machine.
    const order = round % 2 === 1 ? METHODS : [...METHODS].reverse();
    for (const m of order) {
      const r = await measure(specs, m.method);
      console.log(
        `round ${round}, ${m.label}: first answers ${us(r.firstMs)} us, next crawl ${us(r.nextMs)} us, ` +
          `game_server ${(r.tableBytes / 1024 / 1024).toFixed(1)} MiB`,
      );
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
