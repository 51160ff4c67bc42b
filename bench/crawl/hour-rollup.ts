/**
 * `node dist-bench/bench/crawl/hour-rollup.js [--servers 100000] [--crawls 12] [--keep-db]`: what a crawl's close costs PostgreSQL
 * to roll its hour up (rollupRange: server_day's hourly slot and day totals, then the hour's and the day's
 * population buckets) at a real cadence, where every crawl of the hour re-rolls it. docs/BENCHMARKS-history.md has
 * the figures.
 *
 * On a fresh database: `servers` servers whose server_day rows already hold the day's earlier hours (as at noon),
 * then `crawls` crawls 5 minutes apart inside one hour, each one's samples written and the hour rolled up after it,
 * as every close does. Samples vary per crawl: players move, 5 % of servers are offline in a crawl, and one server
 * in ten changes map every fourth crawl. One pool connection: its backend's CPU is read from /proc around each
 * roll-up. After the last, every server_day row's totals are checked against its slots. `--keep-db` leaves the
 * database (its name is printed) for a look at the statements' plans.
 */
import { parseArgs } from "node:util";
import { rollupRange } from "../../src/crawler/store/history-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import { SERVER_DAY_TOTALS_DRIFT_SQL } from "../../src/crawler/store/server-day-totals";
import { createDb } from "../../src/shared/db";
import { createBenchDb } from "../lib/bench-db";
import { procCpuMs } from "../lib/simulator";

const DAY_MS = 24 * 3600 * 1000;
const HOUR_MS = 3600 * 1000;
/** The hour rolled up: 11:00-12:00 UTC yesterday, so slots 1-11 of the day hold earlier hours. */
const HOUR_OF_DAY = 11;
const CRAWL_INTERVAL_MS = 5 * 60 * 1000;
const MAPS = 60;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      servers: { type: "string" },
      crawls: { type: "string" },
      "keep-db": { type: "boolean" },
    },
  });
  const servers = Number(values.servers ?? 100_000);
  const crawls = Number(values.crawls ?? 12);
  const day = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS);
  const hour = new Date(day.getTime() + HOUR_OF_DAY * HOUR_MS);
  const bench = await createBenchDb("hour_rollup");
  const db = createDb(bench.url, { max: 1 });
  try {
    const [backend] = await db.$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid");
    if (!backend) throw new Error("no backend");
    await db.$executeRawUnsafe(
      "INSERT INTO master_source (name, kind, host, updated_at) VALUES ('rollup', 'ADDRESS_LIST', '127.0.0.1', now())",
    );
    await db.$executeRawUnsafe(
      `INSERT INTO game_server (address, ip, query_port, protocol, status, source_id, map, folder, app_id, region, updated_at)
       SELECT host(ip), ip, 27015 + i % 100, 'source', 'ONLINE', 1, 'map_' || ((i / 3) % ${MAPS}),
         (ARRAY['cstrike','tf','csgo','dod','garrysmod'])[1 + i % 5], (ARRAY[10, 440, 730, 300, 4000])[1 + i % 5], i % 8, now()
       FROM generate_series(1, ${servers}) i CROSS JOIN LATERAL (SELECT '127.100.0.0'::inet + (i / 100) AS ip) a`,
    );
    // The day's earlier hours: 12 samples an hour, online, on the server's usual map; the totals are the slots'.
    // One INSERT, as the day's first roll-up writes each row: no dead row versions before the crawls.
    const earlier = (value: string, type: string): string =>
      `array_fill((${value})::${type}, ARRAY[${HOUR_OF_DAY}]) || array_fill(NULL::${type}, ARRAY[${24 - HOUR_OF_DAY}])`;
    await db.$executeRawUnsafe(
      `INSERT INTO server_day (game_server_id, day, samples, online, players_min, players_max, players_sum, bots_max, top_map,
         h_samples, h_online, h_players_min, h_players_max, h_players_sum, h_bots_max, h_map)
       SELECT g.id, $1::date, ${HOUR_OF_DAY} * 12, ${HOUR_OF_DAY} * 12, g.id % 10, g.id % 10 + 8,
         ${HOUR_OF_DAY} * 12 * (g.id % 10 + 4), g.id % 3, g.map,
         ${earlier("12", "smallint")}, ${earlier("12", "smallint")}, ${earlier("g.id % 10", "smallint")},
         ${earlier("g.id % 10 + 8", "smallint")}, ${earlier("12 * (g.id % 10 + 4)", "int")},
         ${earlier("g.id % 3", "smallint")}, ${earlier("g.map", "text")}
       FROM game_server g`,
      day,
    );
    await ensureSamplePartition(db, hour);
    await db.$executeRawUnsafe("VACUUM ANALYZE server_day");
    await db.$executeRawUnsafe("ANALYZE game_server");
    console.log(
      `${servers} servers, ${crawls} crawls in ${hour.toISOString()}'s hour; PostgreSQL backend CPU of the roll-up per server after each crawl`,
    );
    let totalMs = 0;
    for (let k = 1; k <= crawls; k++) {
      const crawlAt = new Date(hour.getTime() + (k - 1) * CRAWL_INTERVAL_MS + 1_234);
      await db.$executeRawUnsafe(
        `INSERT INTO crawl (id, key, source_id, started_at, finished_at) VALUES (${k}, 'rollup-${k}', 1, $1, $1)`,
        crawlAt,
      );
      await db.$executeRawUnsafe(
        `INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms)
         SELECT g.id, $1::timestamptz, ${k}, o.online, CASE WHEN o.online THEN (g.id * 37 + ${k} * 5) % 24 ELSE 0 END,
           CASE WHEN o.online THEN g.id % 3 END, 24,
           CASE WHEN o.online THEN 'map_' || ((g.id / 3 + CASE WHEN g.id % 10 = 0 THEN ${k} / 4 ELSE 0 END) % ${MAPS}) END,
           CASE WHEN o.online THEN 50 END
         FROM game_server g CROSS JOIN LATERAL (SELECT (g.id * 17 + ${k} * 31) % 20 <> 0 AS online) o`,
        crawlAt,
      );
      const before = procCpuMs(backend.pid);
      await rollupRange(db, hour, hour);
      const ms = procCpuMs(backend.pid) - before;
      totalMs += ms;
      console.log(`crawl ${k}: roll-up ${((1000 * ms) / servers).toFixed(1)} us per server`);
    }
    const [drift] = await db.$queryRawUnsafe<{ n: bigint }[]>(SERVER_DAY_TOTALS_DRIFT_SQL);
    console.log(
      `mean over the hour: ${((1000 * totalMs) / crawls / servers).toFixed(1)} us per server per crawl; ` +
        `server_day rows whose totals differ from their slots: ${Number(drift?.n ?? -1)}`,
    );
  } finally {
    await db.$disconnect();
    if (values["keep-db"] === true) console.log(`database kept: ${bench.name}`);
    else await bench.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
