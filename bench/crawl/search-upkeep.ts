/**
 * `node dist-bench/bench/crawl/search-upkeep.js [--servers 100000] [--rounds 2] [--crawls 2] [--churn 0.09]
 * [--setups logged,unlogged,none]`: what keeping the API's player search (game_server_player_search, the names
 * that arrived on each server, with its trigram index, kept by a trigger on game_server: migration
 * 20261207000000_player_name_arrivals) costs the crawl's answer write when players come and go: with the table
 * logged, unlogged, and not kept at all (its update trigger disabled: the rest of the write, as a ceiling); and
 * what the close's compaction of it (src/crawler/store/player-name-search.ts) costs after each crawl.
 * docs/BENCHMARKS-history.md, "2026-12-07: player names written as they arrive", has the figures.
 *
 * The simulator's fleet is listed and answered once to fill the rows, then each measured crawl first replaces
 * each human player with a newcomer with probability --churn (0.09: the share of a server's slots that change
 * hands in 5 minutes with `gsindex simulate --player-sessions`) and writes every answer with the crawl's own
 * writeBatchOutcomes. A VACUUM of both tables and a CHECKPOINT come before each crawl: the first as autovacuum
 * keeps up between crawls, the second as PostgreSQL's default checkpoint_timeout (5 minutes) puts one between a
 * default index's crawls: the first change of each page after it is written to the WAL whole. One pool
 * connection: its backend's CPU is read from /proc, and the WAL it made from
 * pg_current_wal_lsn (nothing else writes to this server's WAL in the bench's database while it runs, but
 * another database's writers would add to it: run it on a quiet server). A server's rows reach the
 * compaction's bound after about 12 crawls that brought it someone new: use --crawls 14 or more to see it work.
 */
import { parseArgs } from "node:util";
import type { ServerStatus } from "../../src/protocol";
import { compactPlayerSearch } from "../../src/crawler/store/player-name-search";
import { createDb, type Db } from "../../src/shared/db";
import { humanName } from "../../src/simulator/content";
import { Random } from "../../src/simulator/random";
import { createBenchDb } from "../lib/bench-db";
import { procCpuMs } from "../lib/simulator";
import {
  listSimulatedFleet,
  simulatedFleet,
  simulatedSource,
  simulatedStatusesById,
  writeSimulatedAnswers,
} from "../lib/simulated-crawl";

const BATCH_SIZE = 100;

interface Setup {
  name: string;
  label: string;
  sql: string[];
}

const TRIGGER = '"game_server_player_search_update"';
const ENABLE = `ALTER TABLE "game_server" ENABLE TRIGGER ${TRIGGER}`;

const SETUPS: Setup[] = [
  {
    name: "logged",
    label: "logged (as migrated)",
    sql: [ENABLE, "ALTER TABLE game_server_player_search SET LOGGED"],
  },
  {
    name: "unlogged",
    label: "unlogged",
    sql: [ENABLE, "ALTER TABLE game_server_player_search SET UNLOGGED"],
  },
  {
    // Not a layout: the rest of the write alone, what the upkeep is measured against.
    name: "none",
    label: "no upkeep (update trigger disabled)",
    sql: [`ALTER TABLE "game_server" DISABLE TRIGGER ${TRIGGER}`],
  },
];

/** Replaces each human player with a newcomer with probability `churn`; the servers whose names changed. */
function churnPlayers(answers: Map<number, ServerStatus>, churn: number, random: Random): number {
  let changed = 0;
  for (const status of answers.values()) {
    let any = false;
    status.playerList = status.playerList.map((p) => {
      if (p.name.startsWith("BOT ") || !random.chance(churn)) return p;
      any = true;
      return { ...p, name: humanName(random), score: 0, durationSeconds: 1 };
    });
    if (any) changed++;
  }
  return changed;
}

async function walLsn(db: Db): Promise<string> {
  const [row] = await db.$queryRawUnsafe<{ lsn: string }[]>(
    "SELECT pg_current_wal_lsn()::text AS lsn",
  );
  return row?.lsn ?? "0/0";
}

async function walBytesSince(db: Db, lsn: string): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ b: string }[]>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS b",
    lsn,
  );
  return Number(row?.b ?? 0);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      servers: { type: "string" },
      rounds: { type: "string" },
      crawls: { type: "string" },
      churn: { type: "string" },
      setups: { type: "string" },
    },
  });
  const names = (values.setups ?? SETUPS.map((x) => x.name).join(",")).split(",");
  const setups = names.map((name) => {
    const setup = SETUPS.find((x) => x.name === name);
    if (!setup) throw new Error(`--setups takes ${SETUPS.map((x) => x.name).join(", ")}`);
    return setup;
  });
  const servers = Number(values.servers ?? 100_000);
  const rounds = Number(values.rounds ?? 2);
  const crawls = Number(values.crawls ?? 2);
  const churn = Number(values.churn ?? 0.09);
  if (!(churn > 0 && churn <= 1)) throw new Error("--churn takes a share in (0, 1]");
  const specs = simulatedFleet(servers);
  const random = new Random(7);
  const bench = await createBenchDb("search_upkeep");
  const db = createDb(bench.url, { max: 1 });
  try {
    const { sourceId, backendPid } = await simulatedSource(db);
    console.log(`PostgreSQL backend ${backendPid}`);
    let crawlNo = 0;
    const answers = new Map<number, ServerStatus>();
    const fill = await listSimulatedFleet(db, {
      sourceId,
      key: `fill-${++crawlNo}`,
      specs,
      batchSize: BATCH_SIZE,
    });
    for (const [id, status] of await simulatedStatusesById(db, specs)) answers.set(id, status);
    await writeSimulatedAnswers(db, fill, answers);
    console.log(
      `${servers} servers in batches of ${BATCH_SIZE}, ${Math.round(churn * 100)} % of players replaced per crawl; ` +
        "per server whose player names changed: PostgreSQL backend CPU and WAL of the whole answer write",
    );
    for (let round = 1; round <= rounds; round++) {
      // Alternated (AB, BA, ...): the tables grow with every crawl, so a fixed order would favour one setup.
      const order = round % 2 === 1 ? setups : [...setups].reverse();
      for (const setup of order) {
        for (const sql of setup.sql) await db.$executeRawUnsafe(sql);
        for (let crawl = 1; crawl <= crawls; crawl++) {
          const listed = await listSimulatedFleet(db, {
            sourceId,
            key: `measured-${++crawlNo}`,
            specs,
            batchSize: BATCH_SIZE,
          });
          const changed = churnPlayers(answers, churn, random);
          // As autovacuum would between crawls: without it every crawl meets the dead rows of all before it, and
          // the setup measured later in a round pays for more of them.
          await db.$executeRawUnsafe("VACUUM game_server, game_server_player_search");
          await db.$executeRawUnsafe("CHECKPOINT");
          const lsn = await walLsn(db);
          const cpuBefore = procCpuMs(backendPid);
          await writeSimulatedAnswers(db, listed, answers);
          const cpuMs = procCpuMs(backendPid) - cpuBefore;
          const walBytes = await walBytesSince(db, lsn);
          console.log(
            `round ${round}, ${setup.label}, crawl ${crawl}: ${changed} servers changed; ` +
              `PostgreSQL ${((1000 * cpuMs) / changed).toFixed(0)} us and WAL ${(walBytes / changed / 1024).toFixed(1)} kB per changed server ` +
              `(${((1000 * cpuMs) / servers).toFixed(1)} us and ${(walBytes / servers / 1024).toFixed(1)} kB per server written)`,
          );
          if (setup.name === "none") continue;
          const compactBefore = procCpuMs(backendPid);
          const compacted = await compactPlayerSearch(db);
          const compactMs = procCpuMs(backendPid) - compactBefore;
          console.log(
            `  the close's compaction: ${compacted} servers' rows replaced, PostgreSQL ${((1000 * compactMs) / servers).toFixed(1)} us per server written`,
          );
        }
      }
    }
  } finally {
    await db.$disconnect();
    await bench.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
