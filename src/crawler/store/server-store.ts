/**
 * Writes of the crawl, each one multi-row statement over a jsonb array, never a round trip per server:
 * - recordListing: upsert the servers a listing found, plan the query batches of the crawl, and mark
 *   the listing run done, in one transaction (a retried listing job finds the run done and only
 *   re-enqueues its batches);
 * - writeBatchOutcomes: current state, life cycle and one sample per server, plus the crawl counters,
 *   in one transaction guarded by the batch's done_at (a retried batch job writes nothing twice).
 */
import type { ServerStatus } from "../../protocol";
import { pgPoolOf, type Db } from "../../shared/db";
import { countryOfIp } from "../geo/country-lookup";
import { CLOSE_TIME_REASONS, type FakePlayerRules } from "../fake-players";
import type { ListingTruncation, ReportedState } from "../list-source";
import { idOf, inTransaction, rowsOf, type Tx } from "./batch-write";
import { insertSamples, sampleOf, type SampleRow } from "./sample-store";
import type { HeldStatus } from "./held-rules";
import type { RulesDigest } from "./rules-digest";
import { cleanText } from "./sanitize";
import { stateInputSql } from "./state-input";
import { answerRowJson, encodeAnswer, type EncodedAnswer } from "./answer-row";

/** One listed server, after the address policy. */
export interface ListingRow {
  address: string;
  ip: string | null;
  queryPort: number;
  gamePort: number | null;
  region: number | null;
  protocol: string;
  notQueryable: boolean;
  isRelay: boolean;
  managed: boolean;
  reported: ReportedState | null;
}

export interface ListingWrite {
  crawlId: number;
  crawlAt: Date;
  runId: number;
  sourceId: number;
  /** Batch keys are `<label>-<n>`. */
  label: string;
  batchSize: number;
  partial: boolean;
  /** Why the listing did not cover its split (null: it did). */
  truncation?: ListingTruncation | null;
  /** Parts of the query still at the source's per-call cap. */
  cappedParts?: number;
  error: string | null;
  /** Where the next listing of this split goes on from (ListingResult.resumeCursor); absent: from the start. */
  resumeCursor?: string | null;
  rows: ListingRow[];
  /** Servers its parts wrote before this last write (recordListingPart): the run's `found` counts them too. */
  foundBefore?: number;
  /** Thresholds of the fake-player rules applied to reported states. @defaultValue DEFAULT_FAKE_PLAYER_RULES */
  fakePlayers?: FakePlayerRules;
  /**
   * Leave a queryable server's row alone when the listing changes nothing in it but last_listed_at: its query
   * batch's write sets that (crawl_batch.listed_at), so each crawl updates the row once instead of twice.
   * Only for a crawl that queries every server it lists (not a listing-only crawl, which drops known servers
   * from its batches). @defaultValue false
   */
  deferListedAt?: boolean;
}

/** A part of a listing still going on: its rows, without what only its end knows. */
export type ListingPartWrite = Omit<
  ListingWrite,
  "partial" | "truncation" | "cappedParts" | "error" | "resumeCursor" | "foundBefore"
>;

export interface ListingWriteResult {
  /** The run had been recorded already (a retried job): nothing was written. */
  alreadyDone: boolean;
  /** Servers listed: a part's own (recordListingPart); at the listing's end, the run's, its parts' included. */
  found: number;
  /** Batch keys planned for this run. */
  batchKeys: string[];
}

/**
 * Listed servers written per statement (upsert, states): bounds what one statement sends and returns. A
 * listing written in parts (ListingParts) writes parts of this size, each one chunk.
 */
export const LISTING_CHUNK_ROWS = 2000;

/** Crawl-wide lock: listing runs of one crawl plan their batches one at a time. */
const CRAWL_LOCK_CLASS = 7_271_006;

function dedupe(rows: ListingRow[]): ListingRow[] {
  const seen = new Map<string, ListingRow>();
  for (const row of rows) seen.set(`${row.address}\u0000${row.queryPort}`, row);
  return [...seen.values()];
}

/**
 * Locks these game_server rows in id order. Every multi-row write takes its row locks through this (or in
 * id order in SQL) before it changes them, so writers over the same servers (a listing, query batches of
 * two crawls, a crawl closing) queue behind each other instead of deadlocking (40P01).
 */
async function lockServers(tx: Tx, ids: readonly number[]): Promise<StoredDigests> {
  const digests: StoredDigests = new Map();
  if (ids.length === 0) return digests;
  const rows = await rowsOf<{ id: string; rules_digest: string | null }>(
    tx,
    "SELECT id, rules_digest::text FROM game_server WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE",
    [[...ids]],
  );
  for (const r of rows) digests.set(idOf(r.id), r.rules_digest);
  return digests;
}

/** Each locked row's rules_digest: what its rules and raw values are, as the crawl's last answer wrote them. */
type StoredDigests = Map<number, RulesDigest | null>;

const byAddressAndPort = (a: ListingRow, b: ListingRow): number =>
  a.address < b.address ? -1 : a.address > b.address ? 1 : a.queryPort - b.queryPort;

/**
 * A listing's last write (or its only one): its rows, and the run marked done with what the listing was
 * (found, partial, resume cursor). A retried job finds the run done, writes nothing and gets its batch keys.
 *
 * The run is marked last, after the crawl's counters: a query batch's write moves the crawl's counters and
 * then its run's (writeBatchOutcomes), and a listing's end that claimed its run first deadlocked (40P01)
 * with a batch of that run whenever both waited for the crawl row (the scale bench's 4-worker crawls did).
 * Whether the run is still open is read first, without a row lock: every listing write of the crawl holds
 * the crawl's advisory lock, so no other listing write can mark the run meanwhile.
 */
export async function recordListing(db: Db, w: ListingWrite): Promise<ListingWriteResult> {
  const { rows, countries } = prepared(w.rows);
  const found = (w.foundBefore ?? 0) + rows.length;
  return inTransaction(pgPoolOf(db), async (tx) => {
    await lockCrawl(tx, w.crawlId);
    const open = await rowsOf<{ id: string }>(
      tx,
      "SELECT id FROM crawl_run WHERE id = $1::bigint AND finished_at IS NULL",
      [w.runId],
    );
    if (open.length === 0) {
      const keys = await rowsOf<{ batch_key: string }>(
        tx,
        "SELECT batch_key FROM crawl_batch WHERE run_id = $1::bigint ORDER BY batch_key",
        [w.runId],
      );
      return { alreadyDone: true, found: 0, batchKeys: keys.map((k) => k.batch_key) };
    }
    const batchKeys = await writeListed(tx, w, rows, countries, { partial: w.partial, done: true });
    const claimed = await rowsOf<{ id: string }>(
      tx,
      `UPDATE crawl_run SET finished_at = now(), found = $1::int, partial = $2::boolean, error = $3::text,
        resume_cursor = $4::text, truncation = $5::"ListingTruncation", capped_parts = $6::int
      WHERE id = $7::bigint AND finished_at IS NULL RETURNING id`,
      [
        found,
        w.partial,
        w.error,
        w.resumeCursor ?? null,
        w.truncation ?? (w.partial ? "CUT_SHORT" : null),
        w.cappedParts ?? 0,
        w.runId,
      ],
    );
    // No listing write can have marked it (they all hold the advisory lock) and no other writer marks runs;
    // should one ever, this rolls the rows back and the job's retry finds the run done.
    if (claimed.length === 0) throw new Error(`listing run ${w.runId} was marked done meanwhile`);
    return { alreadyDone: false, found, batchKeys };
  });
}

/**
 * A part of a listing still going on (a Valve master's pages as they come): its rows written and its
 * batches planned, the run left open for recordListing. `alreadyDone`: the run or its crawl was closed
 * meanwhile (another attempt of the job recorded it, or the crawl was cancelled): nothing was written.
 */
export async function recordListingPart(db: Db, w: ListingPartWrite): Promise<ListingWriteResult> {
  const { rows, countries } = prepared(w.rows);
  return inTransaction(pgPoolOf(db), async (tx) => {
    await lockCrawl(tx, w.crawlId);
    const open = await rowsOf<{ id: string }>(
      tx,
      `SELECT r.id FROM crawl_run r JOIN crawl c ON c.id = r.crawl_id
      WHERE r.id = $1::bigint AND r.finished_at IS NULL AND c.finished_at IS NULL`,
      [w.runId],
    );
    if (open.length === 0) return { alreadyDone: true, found: 0, batchKeys: [] };
    const batchKeys = await writeListed(tx, w, rows, countries, { partial: false, done: false });
    return { alreadyDone: false, found: rows.length, batchKeys };
  });
}

/** Deduplicated, in one order (address, query port), so concurrent listings insert new servers in the same order. */
function prepared(listed: ListingRow[]): { rows: ListingRow[]; countries: (string | null)[] } {
  const rows = dedupe(listed).sort(byAddressAndPort);
  // Outside the transaction: the first lookup of a process loads the country table (a few hundred ms).
  return { rows, countries: rows.map((r) => countryOfIp(r.ip)) };
}

async function runBatchCount(tx: Tx, crawlId: number, runId: number): Promise<number> {
  const [row] = await rowsOf<{ n: string }>(
    tx,
    "SELECT count(*) AS n FROM crawl_batch WHERE crawl_id = $1::bigint AND run_id = $2::bigint",
    [crawlId, runId],
  );
  return Number(row?.n ?? 0);
}

/** Listing writes of one crawl plan their batches one at a time. */
async function lockCrawl(tx: Tx, crawlId: number): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock($1::int, $2::int)", [CRAWL_LOCK_CLASS, crawlId]);
}

/**
 * The listed rows upserted, their batches planned and the crawl's counters moved on; returns the new batch
 * keys. `partial`: the listing stopped short, so the crawl is partial. `done`: the listing's end, which moves
 * the crawl's listed_at (the API's listing time; a part of a listing still going on leaves it).
 */
async function writeListed(
  tx: Tx,
  w: ListingPartWrite,
  rows: ListingRow[],
  countries: (string | null)[],
  listing: { partial: boolean; done: boolean },
): Promise<string[]> {
  // Every existing row of the listing locked at once, in id order, before any is changed: the chunks
  // below each lock only their own rows, and two chunks' rows are not in id order with each other. A
  // listing of one chunk (every part of a paged listing) needs no such step: its upsert locks all of its
  // rows in id order itself (at 100,000 servers this step cost PostgreSQL 1.7 s per listing crawl).
  // The listing's addresses and ports as JSON, not as text[] and int[]: node-postgres writes an array
  // parameter element by element in JavaScript (about 0.4 us and 0.5 kB of garbage a server), where
  // JSON.stringify is native (docs/BENCHMARKS-history.md, "The listing's garbage").
  if (rows.length > LISTING_CHUNK_ROWS)
    await tx.query(
      `SELECT count(*) FROM (
        SELECT g.id FROM game_server g
          JOIN ROWS FROM (jsonb_array_elements_text($1::jsonb), jsonb_array_elements($2::jsonb))
            AS x(address, query_port)
          ON g.address = x.address AND g.query_port = x.query_port::int
        ORDER BY g.id FOR UPDATE OF g) locked`,
      [
        JSON.stringify(rows.map((r) => cleanText(r.address))),
        JSON.stringify(rows.map((r) => r.queryPort)),
      ],
    );
  // In chunks: what a statement sends and returns stays bounded by LISTING_CHUNK_ROWS, not by the
  // size of the listing (a Valve region of 90,000 servers).
  const queryable: number[] = [];
  let upsertedCount = 0;
  let firstListedOther = 0;
  let refused = 0;
  let managedCount = 0;
  let written = 0;
  for (let from = 0; from < rows.length; from += LISTING_CHUNK_ROWS) {
    const chunk = rows.slice(from, from + LISTING_CHUNK_ROWS);
    const input: ListedInput[] = chunk.map((r, i) => ({
      address: cleanText(r.address),
      ip: r.ip,
      country: countries[from + i] ?? null,
      query_port: r.queryPort,
      game_port: r.gamePort,
      region: r.region,
      protocol: r.protocol,
      not_queryable: r.notQueryable,
      is_relay: r.isRelay,
      managed: r.managed,
    }));
    const { upserted } = await upsertListed(
      tx,
      input,
      w.sourceId,
      w.crawlAt,
      w.deferListedAt ?? false,
    );
    upsertedCount += upserted.length;
    // Only a source's own records (management servers, the Steam Web API) report a state: a Valve
    // listing's chunks build no map of their rows.
    const byKey = chunk.some((r) => r.reported)
      ? new Map(chunk.map((r) => [keyOf(cleanText(r.address), r.queryPort), r]))
      : null;
    const reported: { id: number; state: ReportedState; managed: boolean }[] = [];
    for (const u of upserted) {
      const row = byKey?.get(keyOf(u.address, u.query_port));
      if (row?.reported)
        reported.push({ id: u.id, state: row.reported, managed: u.management_registered });
      if (!u.not_queryable && !u.management_registered) queryable.push(u.id);
      // Listed by an earlier run of this crawl: a queryable server is in one of its batches already
      // (counted below); any other was listed by this source since the crawl began. Another source
      // listing the same server meanwhile (one game_server row for both) does not make it "listed
      // before" here, so each crawl counts it once.
      else if (!u.listedHereBefore) {
        firstListedOther++;
        if (u.not_queryable && !u.management_registered) refused++;
      }
    }

    // Management registrations: their state is what they report, sampled like an answer.
    const managed = reported.filter((r) => r.managed);
    if (managed.length > 0) {
      managedCount += managed.length;
      const answers = managed.map((r) =>
        encodeAnswer(
          {
            id: r.id,
            status: reportedToStatus(r.state),
            pingMs: null,
            playersSource: "MANAGEMENT",
          },
          w.fakePlayers,
        ),
      );
      await applyStates(tx, answers, false);
      written += await insertSamples(
        tx,
        w.crawlId,
        w.crawlAt,
        answers.map((a) => a.sample),
      );
    }
    // Other sources' own records (Steam Web API) index a server before any answer arrives.
    const unanswered = reported.filter((r) => !r.managed);
    if (unanswered.length > 0) {
      await applyStates(
        tx,
        unanswered.map((r) =>
          encodeAnswer(
            {
              id: r.id,
              status: reportedToStatus(r.state),
              pingMs: null,
              playersSource: "STEAM_WEB_API",
            },
            w.fakePlayers,
          ),
        ),
        true,
      );
    }
  }

  // Which of them an earlier run of this crawl planned already: only those come back, not the crawl's plan.
  const inCrawl = await rowsOf<{ id: string }>(
    tx,
    `SELECT b.id FROM (SELECT unnest(server_ids) AS id FROM crawl_batch WHERE crawl_id = $1::bigint) b
      JOIN jsonb_array_elements($2::jsonb) AS q(id) ON q.id::bigint = b.id`,
    [w.crawlId, JSON.stringify(queryable)],
  );
  const planned = new Set(inCrawl.map((r) => idOf(r.id)));
  const fresh = queryable.filter((id) => !planned.has(id)).sort((a, b) => a - b);
  const batches: { key: string; ids: number[] }[] = [];
  // Numbered on from the run's batches so far: its earlier parts, or an earlier attempt's.
  const first = fresh.length === 0 ? 0 : await runBatchCount(tx, w.crawlId, w.runId);
  for (let i = 0; i < fresh.length; i += w.batchSize) {
    batches.push({
      key: `${w.label}-${first + batches.length}`,
      ids: fresh.slice(i, i + w.batchSize),
    });
  }
  if (batches.length > 0) {
    const plan = JSON.stringify(batches.map((b) => ({ batch_key: b.key, server_ids: b.ids })));
    await tx.query(
      `INSERT INTO crawl_batch (crawl_id, batch_key, run_id, server_ids, listed_at)
      SELECT $1::bigint, x.batch_key, $2::bigint, x.server_ids, CASE WHEN $4::boolean THEN now() END
      FROM jsonb_to_recordset($3::jsonb) AS x(batch_key text, server_ids bigint[])
      ON CONFLICT DO NOTHING`,
      [w.crawlId, w.runId, plan, w.deferListedAt ?? false],
    );
  }
  const firstListed = fresh.length + firstListedOther;
  const newlyListed = rows.length - (upsertedCount - firstListed);
  await tx.query(
    `UPDATE crawl SET listed = listed + $1::int, written = written + $2::int, refused = refused + $3::int,
      answered = answered + $4::int, partial = partial OR $5::boolean,
      listed_at = CASE WHEN $7::boolean THEN GREATEST(listed_at, now()) ELSE listed_at END
    WHERE id = $6::bigint`,
    [newlyListed, written, refused, managedCount, listing.partial, w.crawlId, listing.done],
  );
  if (managedCount > 0)
    await tx.query("UPDATE crawl_run SET answered = answered + $1::int WHERE id = $2::bigint", [
      managedCount,
      w.runId,
    ]);
  return batches.map((b) => b.key);
}

interface ListedInput {
  address: string;
  ip: string | null;
  country: string | null;
  query_port: number;
  game_port: number | null;
  region: number | null;
  protocol: string;
  not_queryable: boolean;
  is_relay: boolean;
  managed: boolean;
}

interface UpsertedRow {
  /** bigint as read (text); a number once upsertListed returns it. */
  id: number | string;
  address: string;
  query_port: number;
  not_queryable: boolean;
  management_registered: boolean;
}

const keyOf = (address: string, queryPort: number): string => `${address}\u0000${queryPort}`;

/** Rounds of update-then-insert before giving up: a second round only follows a concurrent insert of the same server. */
const UPSERT_ROUNDS = 5;

/**
 * The listed servers' rows, without drawing an id for a server that already has one: an
 * `INSERT ... ON CONFLICT DO UPDATE` draws a sequence value for every row it is given, existing or not,
 * which burned about two ids per server per crawl (issue 11). So: lock and update the rows that exist,
 * then insert only the missing ones (ON CONFLICT DO NOTHING: a concurrent listing may insert the same
 * server first; its row is then updated in the next round). Row locks are taken in one order,
 * (address, query_port) in the "C" collation, so two listings of overlapping fleets cannot deadlock.
 *
 * A management registration never changes a row that another source lists (issue 12): it may update only
 * a row that is itself a registration, or create one. Of the designs that keep the crawled record, this
 * one changes the least: the address stays one row, so every list, lookup and aggregate of the API (and
 * the rollups) shows the crawled server and counts it once without a filter of its own; a second row per
 * address (or a registration table) would need each of them to pick the crawled one. The registration
 * itself stays where it lives, in its management server, listed again at each crawl of that source. A
 * crawled listing that finds a registration row takes it over and clears what the registration reported,
 * so nothing it claimed shows under the crawled server before that server answers.
 *
 * Returns the rows written (updated or inserted), each saying whether this source had listed it since
 * `crawlAt` already (an earlier run of the crawl, or the same server under another region).
 */
async function upsertListed(
  tx: Tx,
  input: ListedInput[],
  sourceId: number,
  crawlAt: Date,
  deferListedAt: boolean,
): Promise<{ upserted: (UpsertedRow & { id: number; listedHereBefore: boolean })[] }> {
  const upserted: UpsertedRow[] = [];
  const listedHereBefore = new Set<number>();
  let pending = input;
  for (let round = 0; round < UPSERT_ROUNDS && pending.length > 0; round++) {
    const json = JSON.stringify(pending);
    const existing = await rowsOf<{
      id: string;
      address: string;
      query_port: number;
      management_registered: boolean;
      listed_before: boolean;
      unchanged: boolean;
    }>(
      tx,
      `SELECT g.id, g.address, g.query_port, g.management_registered,
        (g.last_listed_at >= $1::timestamptz AND g.source_id = $2::int) IS TRUE AS listed_before,
        -- What the update below would leave as it is, apart from last_listed_at (and updated_at): read
        -- here, under the lock, so the update is sent only the rows it changes.
        (g.ip IS NOT DISTINCT FROM x.ip
          AND g.country IS NOT DISTINCT FROM x.country
          AND g.game_port IS NOT DISTINCT FROM COALESCE(x.game_port, g.game_port)
          AND g.region IS NOT DISTINCT FROM (CASE WHEN x.region IS NULL THEN g.region
                                                  WHEN x.region = 255 THEN COALESCE(g.region, 255)
                                                  ELSE x.region END)
          AND g.protocol = x.protocol
          AND g.not_queryable = x.not_queryable
          AND g.is_relay = x.is_relay
          AND g.management_registered = x.managed
          AND g.source_id IS NOT DISTINCT FROM $2::int
          AND g.missed_listings = 0
          AND g.status <> 'DELISTED') IS TRUE AS unchanged
      FROM game_server g JOIN jsonb_to_recordset($3::jsonb) AS x(address text, ip inet, country text,
        query_port int, game_port int, region int, protocol text, not_queryable boolean, is_relay boolean,
        managed boolean)
        ON g.address = x.address AND g.query_port = x.query_port
      -- Every writer of game_server locks its rows in id order (batches and a crawl's close too): no deadlocks.
      ORDER BY g.id
      FOR UPDATE OF g`,
      [crawlAt, sourceId, json],
    );
    const byKey = new Map(pending.map((r) => [keyOf(r.address, r.query_port), r]));
    const updates: (ListedInput & { id: number })[] = [];
    const settled = new Set<string>();
    const takenOver: number[] = [];
    for (const e of existing) {
      const key = keyOf(e.address, e.query_port);
      const r = byKey.get(key);
      if (!r) continue;
      settled.add(key);
      // A registration of an address another source lists: that source's row stays as it is.
      if (r.managed && !e.management_registered) continue;
      const id = idOf(e.id);
      if (e.listed_before) listedHereBefore.add(id);
      // A deferred row (queryable, listed by this source) that the listing would not change: its query
      // batch's write sets last_listed_at (writeBatchOutcomes). Sent to the update, it would cost a new
      // version of its row (about 1.9 kB) for nothing: a third of the crawl's game_server updates were
      // these. Listed all the same: queryable and not a registration, as `unchanged` says.
      if (deferListedAt && !r.not_queryable && !r.managed && e.unchanged) {
        upserted.push({
          id,
          address: e.address,
          query_port: e.query_port,
          not_queryable: false,
          management_registered: false,
        });
        continue;
      }
      if (!r.managed && e.management_registered) takenOver.push(id);
      updates.push({ ...r, id });
    }
    if (updates.length > 0) {
      const rows = await rowsOf<UpsertedRow>(
        tx,
        `UPDATE game_server AS g SET
          ip = x.ip,
          country = x.country,
          game_port = COALESCE(x.game_port, g.game_port),
          region = CASE WHEN x.region IS NULL THEN g.region
                        WHEN x.region = 255 THEN COALESCE(g.region, 255)
                        ELSE x.region END,
          protocol = x.protocol,
          not_queryable = x.not_queryable,
          is_relay = x.is_relay,
          management_registered = x.managed,
          source_id = $1::int,
          last_listed_at = now(),
          missed_listings = 0,
          status = CASE WHEN g.status = 'DELISTED' THEN 'UNKNOWN'::"GameServerStatus" ELSE g.status END,
          updated_at = now()
        FROM jsonb_to_recordset($2::jsonb) AS x(id bigint, ip inet, country text, game_port int,
          region int, protocol text, not_queryable boolean, is_relay boolean, managed boolean)
        WHERE g.id = x.id
        RETURNING g.id, g.address, g.query_port, g.not_queryable, g.management_registered`,
        [sourceId, JSON.stringify(updates)],
      );
      upserted.push(...rows);
    }
    if (takenOver.length > 0) await clearReportedState(tx, takenOver);
    const missing = pending.filter((r) => !settled.has(keyOf(r.address, r.query_port)));
    pending = [];
    if (missing.length === 0) break;
    const inserted = await rowsOf<UpsertedRow>(
      tx,
      `INSERT INTO game_server AS g (address, ip, country, query_port, game_port, region, protocol, not_queryable, is_relay,
        management_registered, source_id, last_listed_at, status, updated_at)
      SELECT x.address, x.ip, x.country, x.query_port, x.game_port, x.region, x.protocol, x.not_queryable, x.is_relay,
        x.managed, $1::int, now(), 'UNKNOWN', now()
      FROM jsonb_to_recordset($2::jsonb) AS x(address text, ip inet, country text, query_port int, game_port int,
        region int, protocol text, not_queryable boolean, is_relay boolean, managed boolean)
      ORDER BY x.address COLLATE "C", x.query_port
      ON CONFLICT (address, query_port) DO NOTHING
      RETURNING g.id, g.address, g.query_port, g.not_queryable, g.management_registered`,
      [sourceId, JSON.stringify(missing)],
    );
    upserted.push(...inserted);
    // What another transaction inserted meanwhile (its commit ended our wait on the conflict) is updated next round.
    const done = new Set(inserted.map((r) => keyOf(r.address, r.query_port)));
    pending = missing.filter((r) => !done.has(keyOf(r.address, r.query_port)));
  }
  if (pending.length > 0)
    throw new Error(
      `listing upsert did not settle after ${UPSERT_ROUNDS} rounds (${pending.length} servers)`,
    );
  return {
    upserted: upserted.map((u) => ({
      ...u,
      id: idOf(u.id),
      listedHereBefore: listedHereBefore.has(idOf(u.id)),
    })),
  };
}

/** Registration rows a crawled listing took over: what the registrations reported goes; the crawl's query fills the row again. */
async function clearReportedState(tx: Tx, ids: number[]): Promise<void> {
  await tx.query(
    `UPDATE game_server SET name = NULL, map = NULL, folder = NULL, game = NULL, app_id = NULL, game_id = NULL,
      players = 0, players_source = NULL, max_players = 0, bots = NULL, password_protected = NULL, vac_secured = NULL, dedicated = NULL,
      server_type = NULL, os = NULL, version = NULL, keywords = '{}', steam_id = NULL, tv_port = NULL, tv_name = NULL,
      ping_ms = NULL, player_list = '[]', rules = '[]', raw = NULL, rules_digest = NULL, player_names = '',
      status = 'UNKNOWN', consecutive_failures = 0, last_error = NULL, last_queried_at = NULL, last_answered_at = NULL
    WHERE id = ANY($1::bigint[])`,
    [ids],
  );
}

function reportedToStatus(r: ReportedState): ServerStatus {
  return {
    protocol: "source",
    name: r.name ?? "",
    map: r.map ?? "",
    folder: r.folder ?? null,
    game: r.game ?? null,
    appId: r.appId ?? null,
    gameId: r.gameId ?? null,
    players: r.players,
    maxPlayers: r.maxPlayers,
    bots: r.bots ?? null,
    passwordProtected: r.passwordProtected ?? null,
    vacSecured: r.vacSecured ?? null,
    dedicated: r.dedicated ?? null,
    os: r.os ?? null,
    version: r.version ?? null,
    keywords: r.keywords ?? [],
    gamePort: r.gamePort ?? null,
    steamId: r.steamId ?? null,
    playerList: r.playerList ?? [],
    rules: r.rules ?? [],
    raw: r.raw ?? null,
    pingMs: null,
    serverType: r.serverType ?? null,
    tvPort: r.tvPort ?? null,
    tvName: r.tvName ?? null,
  };
}

export { answeredPlayerCount, type PlayerCountSource } from "./player-count";

/**
 * The column's stored value when the new one equals it: a jsonb over about 2 kB lives in the table's TOAST
 * relation, and assigning an equal but new value writes it there again and deletes the old copy (0.52 TOAST
 * rows inserted and deleted per server per crawl in the scale bench, for rules that rarely change). The
 * stored value is the old TOAST pointer, which PostgreSQL keeps as it is.
 */
const keepIfEqual = (column: string, value: string): string =>
  `CASE WHEN g.${column} IS NOT DISTINCT FROM ${value} THEN g.${column} ELSE ${value} END`;

/**
 * last_listed_at as the batch's write leaves it: the time its listing listed the servers (crawl_batch.listed_at,
 * when that listing left the rows it did not change to this write: recordListing's deferListedAt), never
 * earlier than what the row has (another listing may have listed the server since).
 */
const LISTED_AT_FROM_BATCH = (param: string): string =>
  `CASE WHEN ${param}::timestamptz IS NULL THEN g.last_listed_at ELSE GREATEST(g.last_listed_at, ${param}::timestamptz) END`;

/** The answers of applyStates, from its third parameter, as the relation `u`. */
const STATE_INPUT = stateInputSql("$3", "u");

/**
 * Current state of answered servers (status ONLINE, failures reset). With `onlyIfNeverAnswered`
 * (a source's own record), only servers with no answer yet take it, and their status is left alone.
 * The answer's fake-player reasons replace the previous answer's; the close-time ones stay. A flag set
 * without any reason (by hand) stays too.
 */
async function applyStates(
  tx: Tx,
  answers: readonly EncodedAnswer[],
  onlyIfNeverAnswered: boolean,
  listedAt: string | null = null,
  storedDigests: StoredDigests = new Map(),
): Promise<void> {
  let input = "[";
  for (let i = 0; i < answers.length; i++) {
    const a = answers[i] as EncodedAnswer;
    if (i > 0) input += ",";
    input += answerRowJson(a, storedDigests.get(a.id));
  }
  input += "]";
  const kept = [...CLOSE_TIME_REASONS];
  await tx.query(
    `UPDATE game_server AS g SET
      name = u.name, map = u.map, folder = u.folder, game = u.game, app_id = u.app_id, game_id = u.game_id,
      players = u.players, players_source = u.players_source::"PlayerCountSource", max_players = u.max_players, bots = u.bots,
      password_protected = u.password_protected, vac_secured = u.vac_secured, dedicated = u.dedicated,
      server_type = u.server_type, os = u.os, version = u.version, keywords = COALESCE(u.keywords, '{}'),
      steam_id = u.steam_id, tv_port = u.tv_port, tv_name = u.tv_name, ping_ms = u.ping_ms,
      game_port = COALESCE(u.game_port, g.game_port),
      player_list = ${keepIfEqual("player_list", "COALESCE(u.player_list, '[]')")},
      rules = CASE WHEN u.rules_kept THEN g.rules ELSE ${keepIfEqual("rules", "COALESCE(u.rules, '[]')")} END,
      raw = CASE WHEN u.rules_kept THEN g.raw ELSE ${keepIfEqual("raw", "u.raw")} END,
      rules_digest = u.rules_digest,
      player_names = COALESCE(u.player_names, ''),
      fake_reasons = CASE WHEN cardinality(g.fake_reasons) = 0 AND cardinality(u.fake_reasons) = 0 THEN g.fake_reasons
        ELSE ARRAY(SELECT DISTINCT r FROM unnest(
          ARRAY(SELECT k FROM unnest(g.fake_reasons) k WHERE k::text = ANY($1::text[])) || u.fake_reasons::"FakeReason"[]) r ORDER BY r)
        END,
      suspected_fake = cardinality(u.fake_reasons) > 0 OR g.fake_reasons::text[] && $1::text[]
        OR (g.suspected_fake AND cardinality(g.fake_reasons) = 0),
      status = CASE WHEN $2::boolean THEN g.status ELSE 'ONLINE'::"GameServerStatus" END,
      consecutive_failures = CASE WHEN $2::boolean THEN g.consecutive_failures ELSE 0 END,
      last_error = CASE WHEN $2::boolean THEN g.last_error ELSE NULL END,
      last_queried_at = CASE WHEN $2::boolean THEN g.last_queried_at ELSE now() END,
      last_answered_at = CASE WHEN $2::boolean THEN g.last_answered_at ELSE now() END,
      last_listed_at = ${LISTED_AT_FROM_BATCH("$4")},
      updated_at = now()
    FROM ${STATE_INPUT}
    WHERE g.id = u.id AND (NOT $2::boolean OR g.last_answered_at IS NULL)`,
    [kept, onlyIfNeverAnswered, input, listedAt],
  );
}

export type BatchOutcome =
  | {
      serverId: number;
      kind: "answered";
      status: HeldStatus;
      pingMs: number | null;
      encoded?: never;
    }
  /** Encoded as it arrived (answer-row.ts), for a batch that holds its answers until its write. */
  | { serverId: number; kind: "answered"; encoded: EncodedAnswer; status?: never; pingMs?: never }
  | { serverId: number; kind: "failed"; code: string }
  /** Refused by the address policy at send time: flagged, not queried, not sampled. */
  | { serverId: number; kind: "refused"; isRelay: boolean };

export interface BatchWrite {
  crawlId: number;
  crawlAt: Date;
  batchKey: string;
  offlineAfterFailures: number;
  outcomes: BatchOutcome[];
  /** When the batch began querying (the crawl's query time runs from its first batch's start). @defaultValue the write's time */
  startedAt?: Date;
  /** Thresholds of the fake-player rules applied to each answer. @defaultValue DEFAULT_FAKE_PLAYER_RULES */
  fakePlayers?: FakePlayerRules;
}

export interface BatchWriteResult {
  duplicate: boolean;
  answered: number;
  failed: number;
  /** Of `failed`: no answer before the deadline. */
  timedOut: number;
  /** Refused by the address policy at send time. */
  refused: number;
  written: number;
}

type AnsweredOutcome = Extract<BatchOutcome, { kind: "answered" }>;

function answerOf(o: AnsweredOutcome, fakePlayers: FakePlayerRules | undefined): EncodedAnswer {
  if (o.encoded !== undefined) return o.encoded;
  return encodeAnswer({ id: o.serverId, status: o.status, pingMs: o.pingMs }, fakePlayers);
}

/** The failure code of a query that got no answer in time (ProtocolError TIMEOUT). */
const TIMEOUT_CODE = "TIMEOUT";

export async function writeBatchOutcomes(db: Db, w: BatchWrite): Promise<BatchWriteResult> {
  return inTransaction(pgPoolOf(db), async (tx) => {
    const claimed = await rowsOf<{ run_id: string | null; listed_at: string | null }>(
      tx,
      // listed_at as text: it goes back as a parameter, and a Date would lose its microseconds.
      `UPDATE crawl_batch SET done_at = now() WHERE crawl_id = $1::bigint AND batch_key = $2::text AND done_at IS NULL
      RETURNING run_id, listed_at::text`,
      [w.crawlId, w.batchKey],
    );
    const claim = claimed[0];
    if (claim === undefined)
      return { duplicate: true, answered: 0, failed: 0, timedOut: 0, refused: 0, written: 0 };
    const storedDigests = await lockServers(
      tx,
      w.outcomes.map((o) => o.serverId),
    );

    const answered: EncodedAnswer[] = [];
    const failed: { id: number; code: string }[] = [];
    const refused: { id: number; is_relay: boolean }[] = [];
    const samples: SampleRow[] = [];
    for (const o of w.outcomes) {
      if (o.kind === "answered") {
        const answer = answerOf(o, w.fakePlayers);
        answered.push(answer);
        samples.push(answer.sample);
      } else if (o.kind === "failed") {
        failed.push({ id: o.serverId, code: cleanText(o.code) });
        samples.push(sampleOf(o.serverId, null, null));
      } else {
        refused.push({ id: o.serverId, is_relay: o.isRelay });
      }
    }
    const listedAt = claim.listed_at;
    if (answered.length > 0) await applyStates(tx, answered, false, listedAt, storedDigests);
    if (failed.length > 0) {
      // N failures in a row: OFFLINE, with the last good state left as it was.
      const input = JSON.stringify(failed);
      await tx.query(
        `UPDATE game_server AS g SET
          consecutive_failures = g.consecutive_failures + 1,
          last_error = u.code,
          last_queried_at = now(),
          status = CASE WHEN g.status <> 'DELISTED' AND g.consecutive_failures + 1 >= $1::int
                        THEN 'OFFLINE'::"GameServerStatus" ELSE g.status END,
          last_listed_at = ${LISTED_AT_FROM_BATCH("$3")},
          updated_at = now()
        FROM jsonb_to_recordset($2::jsonb) AS u(id bigint, code text)
        WHERE g.id = u.id`,
        [w.offlineAfterFailures, input, listedAt],
      );
    }
    if (refused.length > 0) {
      const input = JSON.stringify(refused);
      await tx.query(
        `UPDATE game_server AS g SET not_queryable = true, is_relay = u.is_relay,
          last_listed_at = ${LISTED_AT_FROM_BATCH("$2")}, updated_at = now()
        FROM jsonb_to_recordset($1::jsonb) AS u(id bigint, is_relay boolean) WHERE g.id = u.id`,
        [input, listedAt],
      );
    }
    const written = await insertSamples(tx, w.crawlId, w.crawlAt, samples);
    const timedOut = failed.filter((f) => f.code === TIMEOUT_CODE).length;
    const startedAt = w.startedAt ?? null;
    await tx.query(
      `UPDATE crawl SET queried = queried + $1::int, answered = answered + $2::int,
        failed = failed + $3::int, timed_out = timed_out + $4::int, refused = refused + $5::int,
        written = written + $6::int,
        query_started_at = LEAST(query_started_at, COALESCE($7::timestamptz, now())), queried_at = GREATEST(queried_at, now())
      WHERE id = $8::bigint`,
      [
        answered.length + failed.length,
        answered.length,
        failed.length,
        timedOut,
        refused.length,
        written,
        startedAt,
        w.crawlId,
      ],
    );
    if (claim.run_id !== null) {
      await tx.query(
        "UPDATE crawl_run SET answered = answered + $1::int, failed = failed + $2::int WHERE id = $3::bigint",
        [answered.length, failed.length, claim.run_id],
      );
    }
    return {
      duplicate: false,
      answered: answered.length,
      failed: failed.length,
      timedOut,
      refused: refused.length,
      written,
    };
  });
}

/** One query outside any crawl (the API's requeryServer): current state and life cycle, no sample. */
export async function writeServerOutcome(
  db: Db,
  outcome: BatchOutcome,
  offlineAfterFailures: number,
  fakePlayers?: FakePlayerRules,
): Promise<void> {
  await inTransaction(pgPoolOf(db), async (tx) => {
    if (outcome.kind === "answered") {
      await applyStates(tx, [answerOf(outcome, fakePlayers)], false);
    } else if (outcome.kind === "failed") {
      await tx.query(
        `UPDATE game_server SET consecutive_failures = consecutive_failures + 1, last_error = $1::text,
          last_queried_at = now(), updated_at = now(),
          status = CASE WHEN status <> 'DELISTED' AND consecutive_failures + 1 >= $2::int
                        THEN 'OFFLINE'::"GameServerStatus" ELSE status END
        WHERE id = $3::bigint`,
        [cleanText(outcome.code), offlineAfterFailures, outcome.serverId],
      );
    } else {
      await tx.query(
        "UPDATE game_server SET not_queryable = true, is_relay = $1::boolean, updated_at = now() WHERE id = $2::bigint",
        [outcome.isRelay, outcome.serverId],
      );
    }
  });
}
