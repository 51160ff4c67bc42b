/**
 * Crawl bookkeeping: a crawl of one source, its listing runs (one per region / split) and its query
 * batches. Everything is keyed deterministically and guarded in SQL, so every step can be retried.
 */
import { pgPoolOf, type Db } from "../../shared/db";
import { toId } from "../../shared/ids";
import { idOf } from "./batch-write";
import type { ListSplit, SourceRecord } from "../list-source";
import {
  checkSharedPlayerNames,
  type SharedNamesOptions,
  type SharedNamesResult,
} from "./shared-names";

/** Lock waits behind a busy batch writer can pass Prisma's 5 s default; these transactions only run SQL. */
const TX_OPTIONS = { timeout: 120_000, maxWait: 30_000 };

export interface CrawlRecord {
  id: number;
  key: string;
  sourceId: number;
  startedAt: Date;
  finishedAt: Date | null;
}

export interface RunRecord {
  id: number;
  region: number;
  split: string;
  finished: boolean;
}

/** Creates the crawl and its runs, or finds them when the key exists (a retried start job). */
export async function openCrawl(
  db: Db,
  input: { key: string; sourceId: number; startedAt: Date; splits: ListSplit[] },
): Promise<CrawlRecord> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`
      INSERT INTO crawl (key, source_id, started_at) VALUES (${input.key}, ${input.sourceId}, ${input.startedAt})
      ON CONFLICT (key) DO NOTHING`;
    const crawl = await tx.crawl.findUniqueOrThrow({ where: { key: input.key } });
    if (input.splits.length > 0) {
      const runs = JSON.stringify(input.splits.map((s) => ({ region: s.region, split: s.split })));
      await tx.$executeRaw`
        INSERT INTO crawl_run (crawl_id, region, split, started_at)
        SELECT ${crawl.id}, x.region, x.split, ${crawl.startedAt} FROM jsonb_to_recordset(${runs}::jsonb) AS x(region int, split text)
        ON CONFLICT DO NOTHING`;
    }
    return {
      id: toId(crawl.id),
      key: crawl.key,
      sourceId: crawl.sourceId,
      startedAt: crawl.startedAt,
      finishedAt: crawl.finishedAt,
    };
  }, TX_OPTIONS);
}

/** Per-source lock: one start step of a source at a time decides whether a crawl is running. */
const SOURCE_LOCK_CLASS = 7_271_008;

export type OpenResult =
  { opened: CrawlRecord; running?: undefined } | { opened?: undefined; running: CrawlRecord };

/**
 * openCrawl, unless another crawl of the source is still open: then nothing is created and that crawl
 * comes back as `running` (one source has at most one crawl running; the caller skips the tick). A
 * retried start step finds its own crawl by key and gets it back as `opened`.
 */
export async function openCrawlIfIdle(
  db: Db,
  input: { key: string; sourceId: number; startedAt: Date; splits: ListSplit[] },
): Promise<OpenResult> {
  const running = await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SOURCE_LOCK_CLASS}, ${input.sourceId})`;
    const rows = await tx.$queryRaw<{ id: bigint; key: string; started_at: Date }[]>`
      SELECT id, key, started_at FROM crawl WHERE source_id = ${input.sourceId} AND finished_at IS NULL ORDER BY started_at LIMIT 1`;
    const open = rows[0];
    if (open && open.key !== input.key)
      return {
        id: toId(open.id),
        key: open.key,
        sourceId: input.sourceId,
        startedAt: open.started_at,
        finishedAt: null,
      };
    if (!open) {
      // Inserted under the lock, so a concurrent start step of the same source sees it. Never before the
      // source's last crawl closed: the caller's start time is taken before this lock, and a tick that came
      // as that crawl was closing found it closed here but had a start time a few ms before its close.
      await tx.$executeRaw`
        INSERT INTO crawl (key, source_id, started_at) VALUES (${input.key}, ${input.sourceId},
          GREATEST(${input.startedAt}::timestamptz, (SELECT c.finished_at FROM crawl c
            WHERE c.source_id = ${input.sourceId} ORDER BY c.started_at DESC LIMIT 1)))
        ON CONFLICT (key) DO NOTHING`;
    }
    return null;
  }, TX_OPTIONS);
  if (running) return { running };
  return { opened: await openCrawl(db, input) };
}

/**
 * The resume cursor the split's last recorded listing left (an earlier crawl of the source), or null when
 * that listing reached its end (or there is none): the next listing then starts from the beginning.
 */
export async function lastResumeCursor(
  db: Db,
  input: { sourceId: number; region: number; split: string; before: Date },
): Promise<string | null> {
  const rows = await db.$queryRaw<{ resume_cursor: string | null }[]>`
    SELECT r.resume_cursor FROM crawl_run r JOIN crawl c ON c.id = r.crawl_id
    WHERE c.source_id = ${input.sourceId} AND r.region = ${input.region} AND r.split = ${input.split}
      AND r.finished_at IS NOT NULL AND c.started_at < ${input.before}
    ORDER BY c.started_at DESC, r.id DESC LIMIT 1`;
  return rows[0]?.resume_cursor ?? null;
}

export async function getCrawl(db: Db, crawlId: number): Promise<CrawlRecord | null> {
  const c = await db.crawl.findUnique({ where: { id: crawlId } });
  return (
    c && {
      id: toId(c.id),
      key: c.key,
      sourceId: c.sourceId,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
    }
  );
}

export async function listRuns(db: Db, crawlId: number): Promise<RunRecord[]> {
  const runs = await db.crawlRun.findMany({ where: { crawlId }, orderBy: { id: "asc" } });
  return runs.map((r) => ({
    id: toId(r.id),
    region: r.region,
    split: r.split,
    finished: r.finishedAt !== null,
  }));
}

export async function pendingBatchKeys(db: Db, crawlId: number): Promise<string[]> {
  const rows = await db.crawlBatch.findMany({
    where: { crawlId, doneAt: null },
    select: { batchKey: true },
    orderBy: { batchKey: "asc" },
  });
  return rows.map((r) => r.batchKey);
}

/** What a query batch job needs of each of its servers. */
export interface BatchServer {
  id: number;
  address: string;
  queryPort: number;
  protocol: string;
  managementRegistered: boolean;
}

/**
 * A query batch's servers, read with the batch in one statement over node-postgres (the batch row and then
 * its servers were two Prisma calls per batch: issue 14 item 2, the crawler's own CPU). Null when the
 * batch does not exist; a batch already written has no servers to query. A server deleted since the batch
 * was planned is left out.
 */
export async function batchServers(
  db: Db,
  crawlId: number,
  batchKey: string,
): Promise<{ done: boolean; servers: BatchServer[] } | null> {
  const { rows } = await pgPoolOf(db).query<{
    done: boolean;
    id: string | null;
    address: string;
    query_port: number;
    protocol: string;
    management_registered: boolean;
  }>(
    `SELECT b.done_at IS NOT NULL AS done, g.id, g.address, g.query_port, g.protocol, g.management_registered
    FROM crawl_batch b LEFT JOIN game_server g ON b.done_at IS NULL AND g.id = ANY(b.server_ids)
    WHERE b.crawl_id = $1::bigint AND b.batch_key = $2::text`,
    [crawlId, batchKey],
  );
  const first = rows[0];
  if (first === undefined) return null;
  const servers: BatchServer[] = [];
  for (const r of rows)
    if (r.id !== null)
      servers.push({
        id: idOf(r.id),
        address: r.address,
        queryPort: r.query_port,
        protocol: r.protocol,
        managementRegistered: r.management_registered,
      });
  return { done: first.done, servers };
}

/** Every run listed and every batch written, and not finished yet. */
export async function isCrawlComplete(db: Db, crawlId: number): Promise<boolean> {
  const [row] = await db.$queryRaw<{ complete: boolean }[]>`
    SELECT (c.finished_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM crawl_run r WHERE r.crawl_id = c.id AND r.finished_at IS NULL)
      AND NOT EXISTS (SELECT 1 FROM crawl_batch b WHERE b.crawl_id = c.id AND b.done_at IS NULL)) AS complete
    FROM crawl c WHERE c.id = ${crawlId}`;
  return row?.complete ?? false;
}

export interface FinishResult {
  finished: boolean;
  delisted: number;
  missed: number;
  /** The shared-names rule after the close (shared-names.ts); "off" too when the crawl was already closed. */
  sharedPlayerNames: SharedNamesResult;
}

/**
 * Closes the crawl once: servers of its source that it did not list miss one listing, and after
 * `delistAfterMissedCrawls` in a row become DELISTED. A partial crawl counts no absences.
 */
export interface FinishOptions extends SharedNamesOptions {
  delistAfterMissedCrawls: number;
  /** More query ports than this on one IP: suspected fake farm (0 = off). */
  fakePortsPerIp: number;
  /**
   * CIDR ranges the fake-farm rule never flags (FARM_RULE_EXEMPT_RANGES: known hosting with many real servers
   * on one IP, or a simulator that puts its fleet on one loopback address). Not the address allow-list:
   * being allowed to query an address does not make its servers real.
   */
  exemptCidrs?: readonly string[];
}

/**
 * Closes the crawl, then runs the shared-names rule: both steps of the crawl job's close in one call. The
 * job itself (crawl-jobs.ts finishCrawl) runs them apart, with the catch-up and the roll-up between them.
 */
export async function finishCrawl(
  db: Db,
  crawlId: number,
  options: FinishOptions,
): Promise<FinishResult> {
  const closed = await closeCrawl(db, crawlId, options);
  return {
    ...closed,
    sharedPlayerNames: closed.finished
      ? await checkSharedPlayerNames(db, crawlId, closed.startedAt, options)
      : "off",
  };
}

export type CloseResult = Omit<FinishResult, "sharedPlayerNames"> & { startedAt: Date };

/** Closes the crawl once, in one transaction: absences, delistings and the farm rule. */
export async function closeCrawl(
  db: Db,
  crawlId: number,
  options: FinishOptions,
): Promise<CloseResult> {
  return db.$transaction(async (tx) => {
    const closed = await tx.$queryRaw<{ source_id: number; started_at: Date; partial: boolean }[]>`
      UPDATE crawl c SET finished_at = now(),
        partial = c.partial OR EXISTS (SELECT 1 FROM crawl_run r WHERE r.crawl_id = c.id AND r.partial)
      WHERE c.id = ${crawlId} AND c.finished_at IS NULL
      RETURNING c.source_id, c.started_at, c.partial`;
    const crawl = closed[0];
    if (crawl === undefined)
      return { finished: false, delisted: 0, missed: 0, startedAt: new Date(0) };
    let missed = 0;
    let delisted = 0;
    if (!crawl.partial) {
      // Rows locked in id order first, as every writer of game_server does (server-store.ts lockServers).
      const rows = await tx.$queryRaw<{ status: string }[]>`
        WITH target AS (
          SELECT id FROM game_server
          WHERE source_id = ${crawl.source_id} AND status <> 'DELISTED'
            AND (last_listed_at IS NULL OR last_listed_at < ${crawl.started_at})
          ORDER BY id FOR UPDATE)
        UPDATE game_server g SET missed_listings = g.missed_listings + 1,
          status = CASE WHEN g.missed_listings + 1 >= ${options.delistAfterMissedCrawls} THEN 'DELISTED'::"GameServerStatus" ELSE g.status END,
          updated_at = now()
        FROM target WHERE g.id = target.id
        RETURNING g.status::text AS status`;
      missed = rows.length;
      delisted = rows.filter((r) => r.status === "DELISTED").length;
    }
    if (options.fakePortsPerIp > 0) {
      // Farms of fake servers: hundreds of query ports on one IP.
      await tx.$executeRaw`
        WITH target AS (
          SELECT id FROM game_server
          WHERE NOT ('PORT_FARM' = ANY(fake_reasons)) AND ip IN (
            SELECT ip FROM game_server WHERE source_id = ${crawl.source_id} AND ip IS NOT NULL AND status <> 'DELISTED'
              AND NOT (ip <<= ANY(${[...(options.exemptCidrs ?? [])]}::inet[]))
            GROUP BY ip HAVING count(*) > ${options.fakePortsPerIp})
          ORDER BY id FOR UPDATE)
        UPDATE game_server g SET suspected_fake = true, fake_reasons = array_append(g.fake_reasons, 'PORT_FARM'), updated_at = now()
        FROM target WHERE g.id = target.id`;
    }
    return { finished: true, delisted, missed, startedAt: crawl.started_at };
  }, TX_OPTIONS);
}

export async function loadSource(db: Db, sourceId: number): Promise<SourceRecord | null> {
  const s = await db.masterSource.findUnique({ where: { id: sourceId } });
  return (
    s && {
      id: s.id,
      name: s.name,
      kind: s.kind,
      host: s.host,
      port: s.port,
      filter: s.filter,
      regions: s.regions,
      intervalMs: s.intervalMs,
      enabled: s.enabled,
      options: s.options,
    }
  );
}

/**
 * Crawls of a source still open although they started before `startedBefore` lost their jobs (all
 * retries failed, or Redis lost its data): close them as partial, so they count no absences and the
 * crawl list stays truthful. What they wrote stays.
 */
export async function abandonStaleCrawls(
  db: Db,
  sourceId: number,
  startedBefore: Date,
): Promise<number> {
  return db.$executeRaw`
    UPDATE crawl c SET finished_at = now(), partial = true, error = COALESCE(c.error, format('abandoned: its jobs never completed (%s listing runs and %s query batches left)',
        (SELECT count(*) FROM crawl_run r WHERE r.crawl_id = c.id AND r.finished_at IS NULL),
        (SELECT count(*) FROM crawl_batch b WHERE b.crawl_id = c.id AND b.done_at IS NULL)))
    WHERE c.source_id = ${sourceId} AND c.finished_at IS NULL AND c.started_at < ${startedBefore}`;
}

/**
 * A job of the crawl failed for good (its attempts spent): the crawl can never complete, so it is closed
 * now as partial with `reason`, instead of blocking its source's next crawls until it counts as stale.
 * False when it was closed already.
 */
export async function closeCrawlAsFailed(
  db: Db,
  crawlId: number,
  reason: string,
): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE crawl SET finished_at = now(), partial = true, error = COALESCE(error, ${reason.slice(0, 1000)})
    WHERE id = ${crawlId} AND finished_at IS NULL`;
  return n > 0;
}

/**
 * The source was disabled (or is about to be removed): its open crawls close now as partial with
 * `reason`. Their jobs see the crawl closed and stop (crawl-jobs.ts watchCrawl): nothing more is sent.
 */
export async function cancelOpenCrawls(
  db: Db,
  sourceId: number,
  reason: string,
): Promise<string[]> {
  const rows = await db.$queryRaw<{ key: string }[]>`
    UPDATE crawl SET finished_at = now(), partial = true, error = COALESCE(error, ${reason})
    WHERE source_id = ${sourceId} AND finished_at IS NULL RETURNING key`;
  return rows.map((r) => r.key);
}

/**
 * The index source's listing (sources/index-source.ts): every known server that may be queried (not delisted,
 * not refused by the address policy at its listing, not a management registration, its source enabled) goes
 * into the crawl's batches, `batchSize` ids each in id order, in one statement, so the crawler never holds the
 * index in memory. The run is claimed first, as recordListing does: a retried job finds it done and gets its
 * batch keys back. A server its source has missed DELIST_AFTER_MISSED_CRAWLS times is left out even when its
 * status is no longer DELISTED: an answer to a query in flight when its source delisted it writes it ONLINE
 * again (store/server-store.ts applyStates), and the index must not keep it alive. Nothing is written to game_server: an index crawl lists no server, so it keeps no server
 * from missing its own sources' listings (they alone delist).
 */
export async function planIndexListing(
  db: Db,
  input: {
    crawlId: number;
    runId: number;
    label: string;
    batchSize: number;
    delistAfterMissedCrawls: number;
  },
): Promise<{ alreadyDone: boolean; found: number; batchKeys: string[] }> {
  return db.$transaction(async (tx) => {
    const claimed = await tx.$queryRaw<{ id: bigint }[]>`
      UPDATE crawl_run SET finished_at = now(), partial = false WHERE id = ${input.runId} AND finished_at IS NULL RETURNING id`;
    if (claimed.length === 0) {
      const keys = await tx.$queryRaw<
        { batch_key: string }[]
      >`SELECT batch_key FROM crawl_batch WHERE run_id = ${input.runId} ORDER BY batch_key`;
      return { alreadyDone: true, found: 0, batchKeys: keys.map((k) => k.batch_key) };
    }
    const planned = await tx.$queryRaw<{ batch_key: string; n: number }[]>`
      WITH known AS (
        SELECT g.id, (row_number() OVER (ORDER BY g.id) - 1) / ${input.batchSize} AS page
        FROM game_server g JOIN master_source s ON s.id = g.source_id
        WHERE g.status <> 'DELISTED' AND g.missed_listings < ${input.delistAfterMissedCrawls}
          AND NOT g.not_queryable AND NOT g.management_registered AND s.enabled)
      INSERT INTO crawl_batch (crawl_id, batch_key, run_id, server_ids)
      SELECT ${input.crawlId}, ${input.label} || '-' || page, ${input.runId}, array_agg(id ORDER BY id) FROM known GROUP BY page
      ON CONFLICT DO NOTHING
      RETURNING batch_key, cardinality(server_ids) AS n`;
    const found = planned.reduce((sum, b) => sum + Number(b.n), 0);
    await tx.$executeRaw`UPDATE crawl_run SET found = ${found} WHERE id = ${input.runId}`;
    await tx.$executeRaw`UPDATE crawl SET listed = listed + ${found}, listed_at = GREATEST(listed_at, now()) WHERE id = ${input.crawlId}`;
    return { alreadyDone: false, found, batchKeys: planned.map((b) => b.batch_key).sort() };
  }, TX_OPTIONS);
}

/**
 * A listing-only crawl (the index source queries known servers): its pending batches keep only the servers
 * never queried yet, so a server a listing discovers is queried within that crawl, not a query interval later,
 * and a known one is not queried twice. A batch left empty is done. Returns the keys still to run; safe to
 * repeat (a retried listing job), since a server queried meanwhile only drops out.
 */
export async function narrowToFirstQueries(
  db: Db,
  crawlId: number,
  batchKeys: readonly string[],
): Promise<string[]> {
  if (batchKeys.length === 0) return [];
  const rows = await db.$queryRaw<{ batch_key: string; n: number }[]>`
    UPDATE crawl_batch b SET
      server_ids = COALESCE((SELECT array_agg(g.id ORDER BY g.id) FROM game_server g WHERE g.id = ANY(b.server_ids) AND g.last_queried_at IS NULL), '{}'),
      done_at = CASE WHEN EXISTS (SELECT 1 FROM game_server g WHERE g.id = ANY(b.server_ids) AND g.last_queried_at IS NULL) THEN NULL ELSE now() END
    WHERE b.crawl_id = ${crawlId} AND b.batch_key = ANY(${[...batchKeys]}::text[]) AND b.done_at IS NULL
    RETURNING b.batch_key, cardinality(b.server_ids) AS n`;
  return rows
    .filter((r) => Number(r.n) > 0)
    .map((r) => r.batch_key)
    .sort();
}
