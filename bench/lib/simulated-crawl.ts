/**
 * A crawl of a simulated fleet written with the crawl's own store functions and no network: the fleet listed as one
 * Valve master run, then every batch's answers written. The benches that measure one piece of that write
 * (bench/crawl/answer-write.ts, answer-compression.ts) put their meters around writeSimulatedAnswers.
 */
import { listRuns, openCrawl } from "../../src/crawler/store/crawl-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import { recordListing, writeBatchOutcomes } from "../../src/crawler/store/server-store";
import type { ServerStatus } from "../../src/protocol";
import type { Db } from "../../src/shared/db";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { makeFleet } from "../../src/simulator/make-fleet";
import { simulatedListingRow, simulatedStatusOf } from "./simulated-answer";

/**
 * The fleet these benches write: the simulator's seed 1, its servers spread over 250 loopback hosts (never
 * queried: only their specs and answers are used).
 */
export function simulatedFleet(count: number): SimServerSpec[] {
  return makeFleet({
    count,
    seed: 1,
    hosts: Array.from({ length: 250 }, (_, i) => `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`),
  });
}

export interface ListedCrawl {
  crawlId: number;
  crawlAt: Date;
  batches: { batch_key: string; server_ids: bigint[] }[];
}

/**
 * The source the simulated crawls list for, made in `db`, and the PostgreSQL backend of `db`'s one connection
 * (a pool of `max: 1`), whose CPU the benches read.
 */
export async function simulatedSource(db: Db): Promise<{ sourceId: number; backendPid: number }> {
  const [source] = await db.$queryRawUnsafe<{ id: number }[]>(
    `INSERT INTO master_source (name, kind, host, updated_at) VALUES ('answers', 'ADDRESS_LIST', '127.0.0.1', now())
     RETURNING id`,
  );
  const [backend] = await db.$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid");
  if (!source || !backend) throw new Error("no source or no backend");
  return { sourceId: source.id, backendPid: backend.pid };
}

/** Opens a crawl of `sourceId` and lists the whole fleet into batches of `batchSize`. */
export async function listSimulatedFleet(
  db: Db,
  o: { sourceId: number; key: string; specs: SimServerSpec[]; batchSize: number },
): Promise<ListedCrawl> {
  const crawl = await openCrawl(db, {
    key: o.key,
    sourceId: o.sourceId,
    startedAt: new Date(),
    splits: [{ region: 0, split: "" }],
  });
  await ensureSamplePartition(db, crawl.startedAt);
  const [run] = await listRuns(db, crawl.id);
  if (!run) throw new Error(`crawl ${o.key} has no run`);
  const listing = await recordListing(db, {
    crawlId: crawl.id,
    crawlAt: crawl.startedAt,
    runId: run.id,
    sourceId: o.sourceId,
    label: "r0",
    batchSize: o.batchSize,
    partial: false,
    error: null,
    rows: o.specs.map(simulatedListingRow),
    deferListedAt: true,
  });
  const batches = await db.$queryRawUnsafe<{ batch_key: string; server_ids: bigint[] }[]>(
    "SELECT batch_key, server_ids FROM crawl_batch WHERE crawl_id = $1 ORDER BY batch_key",
    crawl.id,
  );
  if (batches.length !== listing.batchKeys.length) throw new Error("batches do not match listing");
  return { crawlId: crawl.id, crawlAt: crawl.startedAt, batches };
}

/** Each listed server's answer by its game_server id: ids stay from one crawl to the next. */
export async function simulatedStatusesById(
  db: Db,
  specs: SimServerSpec[],
): Promise<Map<number, ServerStatus>> {
  const specByKey = new Map(specs.map((s) => [`${s.host}:${s.queryPort}`, s]));
  const rows = await db.$queryRawUnsafe<{ id: bigint; address: string; query_port: number }[]>(
    "SELECT id, address, query_port FROM game_server",
  );
  const answers = new Map<number, ServerStatus>();
  for (const r of rows) {
    const spec = specByKey.get(`${r.address}:${r.query_port}`);
    if (spec) answers.set(Number(r.id), simulatedStatusOf(spec));
  }
  return answers;
}

/** Every batch of the crawl written as answered, with `answers`' statuses. */
export async function writeSimulatedAnswers(
  db: Db,
  crawl: ListedCrawl,
  answers: Map<number, ServerStatus>,
): Promise<void> {
  for (const b of crawl.batches) {
    await writeBatchOutcomes(db, {
      crawlId: crawl.crawlId,
      crawlAt: crawl.crawlAt,
      batchKey: b.batch_key,
      offlineAfterFailures: 2,
      outcomes: b.server_ids.map((raw) => {
        const serverId = Number(raw);
        const status = answers.get(serverId);
        if (!status) throw new Error(`no answer for server ${serverId}`);
        return { serverId, kind: "answered" as const, status, pingMs: status.pingMs };
      }),
    });
  }
}
