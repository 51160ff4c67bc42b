/**
 * `node dist-bench/bench/crawl/answer-write.js [--servers 100000] [--rounds 2] [--crawls 1] [--fillfactor N]`: what a crawl's write of its
 * answers costs PostgreSQL, on game_server as migrated (its LAST_SEEN and PING sort keys on game_server_sort, so
 * that the update can be heap-only, HOT) and as it was before that migration. docs/BENCHMARKS-history.md, "The sort
 * keys on a table of their own", has the figures.
 *
 * A fleet's answers (the simulator's fleet: its names, maps, players and rules) are listed into batches of 100
 * and written with the crawl's own writeBatchOutcomes, once to fill the rows and then once measured, per
 * setup and round, each on a freshly rewritten table (VACUUM FULL). One pool connection: its backend's CPU is
 * read from /proc, as is this process's (the crawler's side of the write: cleaning, digests, JSON).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { ServerStatus } from "../../src/protocol";
import { createDb, type Db } from "../../src/shared/db";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { connect, createBenchDb } from "../lib/bench-db";
import { repoRoot } from "../lib/child";
import { procCpuMs } from "../lib/simulator";
import {
  listSimulatedFleet,
  simulatedFleet,
  simulatedSource,
  simulatedStatusesById,
  writeSimulatedAnswers,
} from "../lib/simulated-crawl";

const BATCH_SIZE = 100;

/** The two sort indexes of the API (LAST_SEEN, PING) as game_server had them, over columns every answer changes. */
const PER_CRAWL_SORT_INDEXES = {
  game_server_last_seen_key_id_idx: `(COALESCE(last_answered_at, TIMESTAMPTZ '1970-01-01 00:00:00+00')), id`,
  game_server_ping_key_id_idx: "(COALESCE(ping_ms, 32767)), id",
};

/** The migration that moved them to game_server_sort: the setup "as migrated" is made by running it again. */
const SORT_KEYS_MIGRATION = "20261128000000_game_server_sort_keys";

interface Setup {
  label: string;
  sql: string[];
}

/** Each setup from the layout before SORT_KEYS_MIGRATION, which RESTORE makes first. */
const SETUPS: Setup[] = [
  {
    label: "as migrated (sort keys on game_server_sort, fillfactor 50)",
    sql: [
      readFileSync(
        path.join(repoRoot(), "prisma", "migrations", SORT_KEYS_MIGRATION, "migration.sql"),
        "utf8",
      ),
    ],
  },
  { label: `before ${SORT_KEYS_MIGRATION} (sort indexes on game_server, fillfactor 100)`, sql: [] },
];

const RESTORE = [
  "DROP TRIGGER IF EXISTS game_server_sort_insert ON game_server",
  "DROP TRIGGER IF EXISTS game_server_sort_update ON game_server",
  "DROP FUNCTION IF EXISTS game_server_sort_insert",
  "DROP FUNCTION IF EXISTS game_server_sort_update",
  "DROP TABLE IF EXISTS game_server_sort",
  "ALTER TABLE game_server SET (fillfactor = 100)",
  ...Object.entries(PER_CRAWL_SORT_INDEXES).map(
    ([name, columns]) => `CREATE INDEX IF NOT EXISTS ${name} ON game_server (${columns})`,
  ),
];

interface Written {
  postgresCpuMs: number;
  crawlerCpuMs: number;
  updates: number;
  hotUpdates: number;
}

async function tableCounts(db: Db): Promise<{ updates: number; hot: number }> {
  // A backend reports its statistics when it goes idle, at most once a second unless told to.
  await db.$queryRawUnsafe("SELECT pg_stat_force_next_flush()::text");
  const rows = await db.$queryRawUnsafe<{ u: number; h: number }[]>(
    `SELECT n_tup_upd::int AS u, n_tup_hot_upd::int AS h FROM pg_stat_user_tables WHERE relname = 'game_server'`,
  );
  return { updates: rows[0]?.u ?? 0, hot: rows[0]?.h ?? 0 };
}

/** One crawl of the whole fleet: listed into batches, then every batch's answers written. */
async function crawlOnce(
  db: Db,
  sourceId: number,
  key: string,
  specs: SimServerSpec[],
  answers: Map<number, ServerStatus>,
  backendPid: number,
): Promise<Written> {
  const crawl = await listSimulatedFleet(db, { sourceId, key, specs, batchSize: BATCH_SIZE });
  // Server ids stay from one crawl to the next: the answers are made once, after the first listing.
  if (answers.size === 0)
    for (const [id, status] of await simulatedStatusesById(db, specs)) answers.set(id, status);
  const before = await tableCounts(db);
  const postgresBefore = procCpuMs(backendPid);
  const crawlerBefore = process.cpuUsage();
  await writeSimulatedAnswers(db, crawl, answers);
  const crawlerCpu = process.cpuUsage(crawlerBefore);
  const postgresCpuMs = procCpuMs(backendPid) - postgresBefore;
  const after = await tableCounts(db);
  return {
    postgresCpuMs,
    crawlerCpuMs: (crawlerCpu.user + crawlerCpu.system) / 1000,
    updates: after.updates - before.updates,
    hotUpdates: after.hot - before.hot,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      servers: { type: "string" },
      rounds: { type: "string" },
      crawls: { type: "string" },
      // A third setup: as migrated, then game_server at this fillfactor (what room heap-only updates need).
      fillfactor: { type: "string" },
    },
  });
  const servers = Number(values.servers ?? 100_000);
  const setups = [...SETUPS];
  if (values.fillfactor !== undefined) {
    const fillfactor = Number(values.fillfactor);
    if (!Number.isInteger(fillfactor) || fillfactor < 10 || fillfactor > 100)
      throw new Error("--fillfactor takes a whole number from 10 to 100");
    const migrated = SETUPS[0] as Setup;
    setups.push({
      label: `as migrated, then fillfactor ${fillfactor}`,
      sql: [...migrated.sql, `ALTER TABLE game_server SET (fillfactor = ${fillfactor})`],
    });
  }
  const rounds = Number(values.rounds ?? 2);
  const crawls = Number(values.crawls ?? 1);
  const specs = simulatedFleet(servers);
  const bench = await createBenchDb("answer_write");
  const db = createDb(bench.url, { max: 1 });
  try {
    const { sourceId, backendPid } = await simulatedSource(db);
    let crawlNo = 0;
    const answers = new Map<number, ServerStatus>();
    console.log(
      `${servers} servers in batches of ${BATCH_SIZE}; per server: PostgreSQL backend CPU, this process's CPU, updates HOT`,
    );
    for (let round = 1; round <= rounds; round++) {
      // Alternated (AB, BA, ...): every measured write adds to the history tables, so a fixed order would
      // give the second setup the fuller tables in every round.
      const order = round % 2 === 1 ? setups : [...setups].reverse();
      for (const setup of order) {
        // Through a client of its own: the migration is many statements, sent as one simple query.
        const admin = await connect(bench.url);
        try {
          for (const sql of [...RESTORE, ...setup.sql]) await admin.query(sql);
        } finally {
          await admin.end();
        }
        await db.$executeRawUnsafe("VACUUM FULL game_server");
        await db.$executeRawUnsafe("CHECKPOINT");
        // The first write after the rewrite fills each row's answer; the crawl after it is what repeats.
        await crawlOnce(db, sourceId, `fill-${++crawlNo}`, specs, answers, backendPid);
        // Crawl after crawl, as a deployment writes them: the first after the rewrite meets every row of a batch
        // on the same few pages; later ones meet the rows where the updates before them left them.
        for (let crawl = 1; crawl <= crawls; crawl++) {
          const w = await crawlOnce(
            db,
            sourceId,
            `measured-${++crawlNo}`,
            specs,
            answers,
            backendPid,
          );
          console.log(
            `round ${round}, ${setup.label}, crawl ${crawl}: PostgreSQL ${((1000 * w.postgresCpuMs) / servers).toFixed(1)} us, ` +
              `this process ${((1000 * w.crawlerCpuMs) / servers).toFixed(1)} us, ` +
              `HOT ${w.hotUpdates} of ${w.updates} updates`,
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
