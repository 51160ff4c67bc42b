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
import { createDb } from "../../src/shared/db";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { connect, createBenchDb } from "../lib/bench-db";
import { procCpuMs } from "../lib/simulator";
import {
  listSimulatedFleet,
  simulatedFleet,
  simulatedSource,
  simulatedStatusesById,
  writeSimulatedAnswers,
} from "../lib/simulated-crawl";

const BATCH_SIZE = 250;
const COLUMNS = ["rules", "player_list", "raw", "player_names"];
/** How far each player's time moves on between the two crawls: a 5-minute cadence. */
const CRAWL_INTERVAL_SECONDS = 300;

const METHODS = [
  { label: "pglz (PostgreSQL's default)", method: "default" },
  { label: "LZ4 (as migrated)", method: "lz4" },
];

/** The backend's CPU while `work` runs (the pool has that one connection). */
async function backendCpuMs(backendPid: number, work: () => Promise<void>): Promise<number> {
  const before = procCpuMs(backendPid);
  await work();
  return procCpuMs(backendPid) - before;
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
    const { sourceId, backendPid } = await simulatedSource(db);
    const listing = { sourceId, specs, batchSize: BATCH_SIZE };
    const first = await listSimulatedFleet(db, { ...listing, key: "first" });
    const answers = await simulatedStatusesById(db, specs);
    const firstMs = await backendCpuMs(backendPid, () => writeSimulatedAnswers(db, first, answers));
    for (const status of answers.values())
      status.playerList = status.playerList.map((p) => ({
        ...p,
        durationSeconds: (p.durationSeconds ?? 0) + CRAWL_INTERVAL_SECONDS,
      }));
    const next = await listSimulatedFleet(db, { ...listing, key: "next" });
    const nextMs = await backendCpuMs(backendPid, () => writeSimulatedAnswers(db, next, answers));
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
  const specs = simulatedFleet(servers);
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
