/**
 * The crawl as four idempotent steps, each a plain function over its dependencies, so the same code
 * runs under BullMQ workers (src/crawler/queues.ts) and in the foreground (`gsindex crawl --once`):
 *
 *   startCrawl  open the crawl (key fixed by the schedule), one run per region / split → listRun jobs
 *   listRun     list one split, upsert what it found, plan query batches → queryBatch jobs
 *   queryBatch  query one batch, write state + samples in one transaction
 *   finishCrawl once every run is listed and every batch written: life cycle, rollups
 *
 * Every step is guarded in SQL (see store/), so a retried, duplicated or resumed job writes nothing twice.
 * A list source or a game server failing is a result (a partial run, a failed outcome), not a job failure;
 * jobs fail only when our side does (database, Redis), and are then retried.
 */
import { startDeadline } from "../protocol";
import type { Db } from "../shared/db";
import type { Logger } from "../shared/logger";
import { createAddressPolicy, parseBlockedRanges, type AddressPolicy } from "./address-policy";
import type { FakePlayerRules } from "./fake-players";
import { watchCrawl } from "./crawl-watch";
import {
  splitLabel,
  type ListSourceFactory,
  type ListSplit,
  type ListedServer,
  type ListingTruncation,
  type SourceRecord,
} from "./list-source";
import { mapLimit, type Querier } from "./querier";
import {
  abandonStaleCrawls,
  batchServers,
  closeCrawl,
  getCrawl,
  isCrawlComplete,
  lastResumeCursor,
  listRuns,
  loadSource,
  narrowToFirstQueries,
  openCrawlIfIdle,
  pendingBatchKeys,
  planIndexListing,
  type CrawlRecord,
  type FinishResult,
} from "./store/crawl-store";
import { checkSharedPlayerNames } from "./store/shared-names";
import { compactPlayerSearch } from "./store/player-name-search";
import { createBlockedRangeReader, type BlockedRangeReader } from "./store/blocked-ranges";
import { JobNotStartedError } from "./job-not-started";
import { rollupRange } from "./store/history-store";
import { encodeAnswer } from "./store/answer-row";
import { ensureSamplePartition } from "./store/partitions";
import { ListingParts } from "./listing-parts";
import {
  recordListing,
  recordListingPart,
  LISTING_CHUNK_ROWS,
  writeBatchOutcomes,
  writeServerOutcome,
  type BatchOutcome,
  type ListingRow,
} from "./store/server-store";
import type { AllowEntry } from "../shared/config";
import { toId } from "../shared/ids";

export interface ListRunJob {
  crawlId: number;
  crawlKey: string;
  runId: number;
}
export interface QueryBatchJob {
  crawlId: number;
  crawlKey: string;
  batchKey: string;
}
export interface RequeryServerJob {
  serverId: number;
}
export interface FinishCrawlJob {
  crawlId: number;
  crawlKey: string;
}
/** A start of the source owed since a tick found `afterCrawlKey` running: made at that crawl's close. */
export interface CatchUpJob {
  sourceId: number;
  afterCrawlKey: string;
  /** The skipped start's time: the catch-up crawl's key. */
  skippedAtMs: number;
  /** When it starts anyway if the crawl's close never releases it (the crawl failed, or was abandoned). */
  fallbackMs: number;
}

/** Where steps hand work on: BullMQ queues, or the in-process runner. Adding twice must be harmless. */
export interface JobSink {
  listRuns(jobs: ListRunJob[]): Promise<void>;
  queryBatches(jobs: QueryBatchJob[]): Promise<void>;
  finishCrawl(job: FinishCrawlJob): Promise<void>;
  /**
   * Holds a start of the source until `afterCrawlKey` closes (releaseCatchUp); one per crawl however many
   * ticks it skips. Absent where there are no ticks (`crawl --once`).
   */
  holdCatchUp?(job: CatchUpJob): Promise<void>;
  /** Starts the catch-up held for this crawl, if any, now. */
  releaseCatchUp?(afterCrawlKey: string): Promise<void>;
}

export interface CrawlSettings {
  queryBatchSize: number;
  /** Queries in flight per batch job. */
  offlineAfterFailures: number;
  delistAfterMissedCrawls: number;
  fakePortsPerIp: number;
  /** CIDR ranges the farm rule never flags (FARM_RULE_EXEMPT_RANGES). */
  farmRuleExemptRanges: readonly string[];
  /** Thresholds of the fake-player rules. @defaultValue DEFAULT_FAKE_PLAYER_RULES (src/crawler/fake-players.ts) */
  fakePlayers?: FakePlayerRules;
  /** Deadline for one listing run. */
  listTimeoutMs: number;
  addressAllowList: readonly AllowEntry[];
  /**
   * QUERY_FROM_INDEX: the index source queries every known server, so the other sources' crawls only list
   * (and query what they find that was never queried). A source's `query` option overrides it either way.
   * The process default is on (src/shared/config.ts); absent here, crawls list and query.
   * @defaultValue false
   */
  queryFromIndex?: boolean;
}

export type CrawlMode = "index" | "listing-only" | "list-and-query";

/**
 * What a crawl of the source queries: `index`, every known server (the index source); `listing-only`, only
 * the servers its listing found that were never queried (the index source re-queries the rest); and
 * `list-and-query`, everything its listing found (every crawl with QUERY_FROM_INDEX=0, and `gsindex crawl --once`).
 */
export function crawlModeOf(
  source: Pick<SourceRecord, "kind" | "options">,
  settings: Pick<CrawlSettings, "queryFromIndex">,
): CrawlMode {
  if (source.kind === "INDEX") return "index";
  const query = ((source.options ?? {}) as Record<string, unknown>).query;
  const queries = typeof query === "boolean" ? query : settings.queryFromIndex !== true;
  return queries ? "list-and-query" : "listing-only";
}

export type CrawlEvent =
  | {
      type: "listed";
      crawlId: number;
      region: number;
      found: number;
      partial: boolean;
      error: string | null;
    }
  | {
      type: "batch";
      crawlId: number;
      queried: number;
      answered: number;
      failed: number;
      written: number;
    }
  | { type: "finished"; crawlId: number }
  /** A scheduled or requested crawl found the source's previous crawl still running: not started. */
  | { type: "skipped"; sourceId: number; sourceName: string; runningCrawlId: number };

export interface CrawlDeps {
  db: Db;
  logger: Logger;
  sink: JobSink;
  listSources: ListSourceFactory;
  querier: Querier;
  settings: CrawlSettings;
  onEvent?: (event: CrawlEvent) => void;
}

/** Crawl keys go into BullMQ job ids, which may not contain ':' (BullMQ's key separator): only [a-z0-9-]. */
export function crawlKeyOf(sourceName: string, scheduledAtMs: number): string {
  const slug = sourceName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .slice(0, 64);
  return `${slug}-${scheduledAtMs}`;
}

/**
 * A crawl still open this many intervals after it started is closed as partial. Its lost jobs are enqueued again
 * at every skipped tick (requeueOpenWork), so this is the last resort for a crawl whose steps keep failing.
 */
const STALE_AFTER_INTERVALS = 3;
const STALE_AFTER_MIN_MS = 30 * 60_000;
const staleAfterMs = (intervalMs: number): number =>
  Math.max(STALE_AFTER_INTERVALS * intervalMs, STALE_AFTER_MIN_MS);

/** One blocked-range reader per database client, so every crawl step of a process shares its cache. */
const blockedReaders = new WeakMap<Db, BlockedRangeReader>();

async function currentPolicy(deps: CrawlDeps): Promise<AddressPolicy> {
  let read = blockedReaders.get(deps.db);
  if (!read) {
    read = createBlockedRangeReader(deps.db);
    blockedReaders.set(deps.db, read);
  }
  return createAddressPolicy(deps.settings.addressAllowList, parseBlockedRanges(await read()));
}

export async function startCrawl(
  deps: CrawlDeps,
  input: { sourceId: number; key: string; startedAt: Date },
): Promise<CrawlRecord | null> {
  const source = await loadSource(deps.db, input.sourceId);
  if (!source) {
    deps.logger.warn(
      { sourceId: input.sourceId },
      "crawl of a source that no longer exists: skipped",
    );
    return null;
  }
  const splits = deps.listSources(source).splits();
  const abandoned = await abandonStaleCrawls(
    deps.db,
    source.id,
    new Date(input.startedAt.getTime() - staleAfterMs(source.intervalMs)),
  );
  if (abandoned > 0)
    deps.logger.warn(
      { source: source.name, abandoned },
      "older crawls never finished: closed as partial",
    );
  const open = await openCrawlIfIdle(deps.db, {
    key: input.key,
    sourceId: source.id,
    startedAt: input.startedAt,
    splits,
  });
  if (open.running) {
    // Never stacked: overlapping crawls of one source write the same servers twice and miscount `listed`.
    deps.onEvent?.({
      type: "skipped",
      sourceId: source.id,
      sourceName: source.name,
      runningCrawlId: open.running.id,
    });
    deps.logger.info(
      {
        source: source.name,
        skipped: input.key,
        running: open.running.key,
        runningForMs: input.startedAt.getTime() - open.running.startedAt.getTime(),
      },
      "crawl tick skipped: the previous crawl of the source is still running",
    );
    await holdCatchUp(deps, source, open.running, input.startedAt);
    await requeueOpenWork(deps, open.running);
    return null;
  }
  const crawl = open.opened;
  await ensureSamplePartition(deps.db, crawl.startedAt);
  if (crawl.finishedAt !== null) return crawl;
  const runs = (await listRuns(deps.db, crawl.id)).filter((r) => !r.finished);
  await deps.sink.listRuns(
    runs.map((r) => ({ crawlId: crawl.id, crawlKey: crawl.key, runId: r.id })),
  );
  await maybeFinish(deps, crawl);
  deps.logger.info({ crawl: crawl.key, source: source.name, runs: runs.length }, "crawl started");
  return crawl;
}

function toListingRow(s: ListedServer, split: ListSplit, policy: AddressPolicy): ListingRow {
  const verdict = policy.check(s.host);
  const managed = s.managed === true;
  return {
    address: verdict.ip ?? s.host.toLowerCase(),
    ip: verdict.ip,
    queryPort: s.queryPort,
    gamePort: s.gamePort ?? null,
    region: s.region ?? (split.region >= 0 ? split.region : null),
    protocol: s.protocol ?? "source",
    notQueryable: managed || !verdict.queryable,
    isRelay: verdict.reason === "relay",
    managed,
    reported: s.reported ?? null,
  };
}

export async function listRun(
  deps: CrawlDeps,
  job: ListRunJob,
  signal?: AbortSignal,
): Promise<void> {
  const crawl = await getCrawl(deps.db, job.crawlId);
  if (!crawl || crawl.finishedAt !== null) return;
  const runs = await listRuns(deps.db, crawl.id);
  const index = runs.findIndex((r) => r.id === job.runId);
  const run = runs[index];
  if (!run) return;
  const source = await loadSource(deps.db, crawl.sourceId);
  if (!source) return;
  let batchKeys: string[];
  const mode = crawlModeOf(source, deps.settings);
  if (run.finished) {
    // A retried job: the listing is recorded; hand on whatever of it is still pending.
    batchKeys = await pendingBatchKeysOfRun(deps, crawl, run, index);
  } else if (mode === "index") {
    const planned = await planIndexListing(deps.db, {
      crawlId: crawl.id,
      runId: run.id,
      label: splitLabel(run, index),
      batchSize: deps.settings.queryBatchSize,
      delistAfterMissedCrawls: deps.settings.delistAfterMissedCrawls,
    });
    batchKeys = planned.batchKeys;
    if (!planned.alreadyDone)
      deps.onEvent?.({
        type: "listed",
        crawlId: crawl.id,
        region: run.region,
        found: planned.found,
        partial: false,
        error: null,
      });
  } else {
    const split: ListSplit = { region: run.region, split: run.split };
    // An earlier attempt of this job may have written parts of the listing and failed before it handed
    // their batches on: this attempt lists those servers again but plans them no second time.
    await handOnBatches(deps, crawl, mode, await pendingBatchKeysOfRun(deps, crawl, run, index));
    let partial = false;
    let truncation: ListingTruncation | null = null;
    let cappedParts = 0;
    let error: string | null = null;
    let resumeCursor: string | null = null;
    // A listing cut short (a master's rate limit) goes on where it stopped instead of redoing the first pages.
    const resumeFrom = await lastResumeCursor(deps.db, {
      sourceId: source.id,
      region: run.region,
      split: run.split,
      before: crawl.startedAt,
    });
    const policy = await currentPolicy(deps);
    const listing = {
      crawlId: crawl.id,
      crawlAt: crawl.startedAt,
      runId: run.id,
      sourceId: source.id,
      label: splitLabel(run, index),
      batchSize: deps.settings.queryBatchSize,
      // A listing-only crawl drops known servers from its batches (narrowToFirstQueries): it writes every row.
      deferListedAt: mode === "list-and-query",
      ...(deps.settings.fakePlayers ? { fakePlayers: deps.settings.fakePlayers } : {}),
    };
    const parts = new ListingParts({
      rowOf: (s) =>
        Number.isInteger(s.queryPort) && s.queryPort >= 1 && s.queryPort <= 65535
          ? toListingRow(s, split, policy)
          : null,
      write: (rows) => recordListingPart(deps.db, { ...listing, rows }),
      handOn: (keys) => handOnBatches(deps, crawl, mode, keys),
      // One chunk of the store each: a part is written without a lock step of its own.
      partRows: LISTING_CHUNK_ROWS,
    });
    // Not AbortSignal.any on the worker's long-lived signal (nodejs/node#55351): startDeadline unlinks when done.
    const watch = watchCrawl(deps.db, crawl.id, signal);
    const deadline = startDeadline(
      deps.settings.listTimeoutMs,
      watch.signal,
      new DOMException("The operation was aborted due to timeout", "TimeoutError"),
    );
    try {
      const result = await deps
        .listSources(source)
        .list(split, deadline.signal, resumeFrom ?? undefined, parts.sink);
      parts.add(result.servers);
      partial = result.partial;
      truncation = result.truncation ?? (result.partial ? "CUT_SHORT" : null);
      cappedParts = result.cappedParts ?? 0;
      error = result.error ?? null;
      resumeCursor = result.resumeCursor ?? null;
    } catch (err) {
      partial = true;
      truncation = "CUT_SHORT";
      error = err instanceof Error ? err.message : String(err);
    } finally {
      deadline.dispose();
      watch.dispose();
    }
    if (watch.cancelled()) return;
    // A part that could not be written is the job's failure (retried), not the listing stopping short.
    if (parts.failed() !== undefined) throw parts.failed();
    const written = await recordListing(deps.db, {
      ...listing,
      partial,
      truncation,
      cappedParts,
      error,
      resumeCursor,
      rows: parts.takeRest(),
      foundBefore: parts.written,
    });
    batchKeys = written.batchKeys;
    if (!written.alreadyDone) {
      deps.onEvent?.({
        type: "listed",
        crawlId: crawl.id,
        region: run.region,
        found: written.found,
        partial,
        error,
      });
      // The crawl's one summary line (finishCrawl) says what went wrong; per region only at debug.
      if (error)
        deps.logger.debug({ crawl: crawl.key, region: run.region, error }, "listing stopped short");
    }
  }
  await handOnBatches(deps, crawl, mode, batchKeys);
  await maybeFinish(deps, crawl);
}

async function pendingBatchKeysOfRun(
  deps: CrawlDeps,
  crawl: CrawlRecord,
  run: ListSplit,
  index: number,
): Promise<string[]> {
  const prefix = `${splitLabel(run, index)}-`;
  return (await pendingBatchKeys(deps.db, crawl.id)).filter((k) => k.startsWith(prefix));
}

/** A listing's batches, queued to be queried (a listing-only crawl's narrowed to servers never queried). */
async function handOnBatches(
  deps: CrawlDeps,
  crawl: CrawlRecord,
  mode: CrawlMode,
  keys: string[],
): Promise<void> {
  if (keys.length === 0) return;
  const batchKeys =
    mode === "listing-only" ? await narrowToFirstQueries(deps.db, crawl.id, keys) : keys;
  await deps.sink.queryBatches(
    batchKeys.map((batchKey) => ({ crawlId: crawl.id, crawlKey: crawl.key, batchKey })),
  );
}

/**
 * `signal`: the job's own (BullMQ aborts it when the worker gives the job up). `stopping`: the worker's stop
 * has begun; a batch still waiting for a query slot then throws JobNotStartedError and goes back to the
 * queue unstarted.
 */
export async function queryBatch(
  deps: CrawlDeps,
  job: QueryBatchJob,
  signal?: AbortSignal,
  stopping?: AbortSignal,
): Promise<void> {
  const crawl = await getCrawl(deps.db, job.crawlId);
  // A closed crawl has no batch left to run (finishCrawl waits for all): it was cancelled or given up.
  if (!crawl || crawl.finishedAt !== null) return;
  const batch = await batchServers(deps.db, job.crawlId, job.batchKey);
  if (!batch || batch.done) {
    await maybeFinish(deps, crawl);
    return;
  }
  const servers = batch.servers;
  const policy = await currentPolicy(deps);
  const watch = watchCrawl(deps.db, crawl.id, signal);
  const querySignal = watch.signal;
  // Its queries start when the process has a query slot free (QUERY_CONCURRENCY), not behind every other
  // batch's: a job waits here, holding only its ids, so a worker may run more batch jobs than fill the slots
  // (WORKER_CONCURRENCY) and keep them full while the jobs that started first wait for their slowest servers.
  // Nothing may await between the slot and the queries below: the next job is let through on the next turn.
  await deps.querier.whenFree?.(querySignal, stopping);
  if (stopping?.aborted === true && !querySignal.aborted) {
    watch.dispose();
    throw new JobNotStartedError();
  }
  const startedAt = new Date();
  // The querier caps queries in flight per process (limitInFlight); the batch asks for all of its servers.
  const outcomes = await mapLimit(
    servers,
    servers.length,
    async (s): Promise<BatchOutcome | null> => {
      if (s.managementRegistered || querySignal.aborted) return null;
      const serverId = s.id;
      const verdict = policy.check(s.address);
      if (!verdict.queryable)
        return { serverId, kind: "refused", isRelay: verdict.reason === "relay" };
      const outcome = await deps.querier.query(
        { serverId, host: s.address, queryPort: s.queryPort, protocol: s.protocol },
        querySignal,
      );
      // Held until the whole batch is written: encoded as its row of the write (answer-row.ts).
      return outcome.kind === "answered"
        ? {
            serverId,
            kind: "answered",
            encoded: encodeAnswer(
              { id: serverId, status: outcome.status, pingMs: outcome.pingMs },
              deps.settings.fakePlayers,
            ),
          }
        : { serverId, kind: "failed", code: outcome.code };
    },
  ).finally(() => watch.dispose());
  if (watch.cancelled()) return;
  if (signal?.aborted)
    throw new Error("query batch aborted before its results were written; it will be retried");
  const result = await writeBatchOutcomes(deps.db, {
    crawlId: crawl.id,
    crawlAt: crawl.startedAt,
    batchKey: job.batchKey,
    offlineAfterFailures: deps.settings.offlineAfterFailures,
    outcomes: outcomes.filter((o): o is BatchOutcome => o !== null),
    startedAt,
    ...(deps.settings.fakePlayers ? { fakePlayers: deps.settings.fakePlayers } : {}),
  });
  if (!result.duplicate) {
    deps.onEvent?.({
      type: "batch",
      crawlId: crawl.id,
      queried: result.answered + result.failed,
      answered: result.answered,
      failed: result.failed,
      written: result.written,
    });
  }
  await maybeFinish(deps, crawl);
}

/**
 * The running crawl's jobs may be gone (Redis restarted empty, or its data was evicted): the database
 * still knows every step left, so each one is enqueued again under its own job id. A job that still
 * exists keeps that id, so the queue ignores the copy and a live crawl is not disturbed; a lost one comes
 * back and the crawl completes instead of blocking its source until it counts as stale.
 */
async function requeueOpenWork(deps: CrawlDeps, crawl: CrawlRecord): Promise<void> {
  const runs = (await listRuns(deps.db, crawl.id)).filter((r) => !r.finished);
  await deps.sink.listRuns(
    runs.map((r) => ({ crawlId: crawl.id, crawlKey: crawl.key, runId: r.id })),
  );
  let batchKeys = await pendingBatchKeys(deps.db, crawl.id);
  const source = await loadSource(deps.db, crawl.sourceId);
  if (source && crawlModeOf(source, deps.settings) === "listing-only")
    batchKeys = await narrowToFirstQueries(deps.db, crawl.id, batchKeys);
  await deps.sink.queryBatches(
    batchKeys.map((batchKey) => ({ crawlId: crawl.id, crawlKey: crawl.key, batchKey })),
  );
  await maybeFinish(deps, crawl);
}

/**
 * A skipped tick is made up when the crawl that made it skip closes, not at the tick after: otherwise a crawl
 * that runs a little past its interval gives its servers twice the interval (the index source's p95 in
 * docs/BENCHMARKS-history.md, "Cadence"). The hold is set before looking at the crawl again, and finishCrawl closes
 * the crawl before releasing, so a close between the skip and the hold still releases it.
 */
async function holdCatchUp(
  deps: CrawlDeps,
  source: Pick<SourceRecord, "id" | "intervalMs">,
  running: CrawlRecord,
  skippedAt: Date,
): Promise<void> {
  if (!deps.sink.holdCatchUp) return;
  await deps.sink.holdCatchUp({
    sourceId: source.id,
    afterCrawlKey: running.key,
    skippedAtMs: skippedAt.getTime(),
    // By then the next start closes the crawl as stale anyway.
    fallbackMs: staleAfterMs(source.intervalMs),
  });
  const now = await getCrawl(deps.db, running.id);
  if (now === null || now.finishedAt !== null) await deps.sink.releaseCatchUp?.(running.key);
}

async function maybeFinish(deps: CrawlDeps, crawl: CrawlRecord): Promise<void> {
  if (await isCrawlComplete(deps.db, crawl.id))
    await deps.sink.finishCrawl({ crawlId: crawl.id, crawlKey: crawl.key });
}

/**
 * One line per source and crawl: its totals, and when listings stopped short, why (each distinct
 * error once) at warn level, so an offline machine logs one clear line per crawl, not one per region.
 */
async function logCrawlSummary(
  deps: CrawlDeps,
  crawl: CrawlRecord,
  result: Pick<FinishResult, "missed" | "delisted" | "sharedPlayerNames">,
): Promise<void> {
  const [totals, runs] = await Promise.all([
    deps.db.crawl.findUnique({
      where: { id: crawl.id },
      select: {
        listed: true,
        queried: true,
        answered: true,
        failed: true,
        timedOut: true,
        refused: true,
        source: { select: { name: true, kind: true, options: true } },
      },
    }),
    deps.db.crawlRun.findMany({
      where: { crawlId: crawl.id },
      select: { partial: true, error: true },
    }),
  ]);
  const errors = [...new Set(runs.flatMap((r) => (r.error ? [r.error] : [])))];
  const line = {
    crawl: crawl.key,
    source: totals?.source.name,
    mode: totals ? crawlModeOf(totals.source, deps.settings) : undefined,
    listed: totals?.listed,
    queried: totals?.queried,
    answered: totals?.answered,
    failed: totals?.failed,
    timedOut: totals?.timedOut,
    refused: totals?.refused,
    missed: result.missed,
    delisted: result.delisted,
    partialRuns: runs.filter((r) => r.partial).length,
    runs: runs.length,
    sharedPlayerNames: result.sharedPlayerNames,
  };
  if (result.sharedPlayerNames === "over budget" || result.sharedPlayerNames === "failed")
    deps.logger.warn(
      line,
      `shared player names not checked at this close (${result.sharedPlayerNames}): the flags stay as they were`,
    );
  if (errors.length === 0) deps.logger.info(line, "crawl finished");
  else deps.logger.warn({ ...line, errors }, `crawl finished short: ${errors.join("; ")}`);
}

interface RollupState {
  running: Promise<void> | null;
  next: {
    fromMs: number;
    promise: Promise<void>;
    resolve(): void;
    reject(err: unknown): void;
  } | null;
}
const rollups = new WeakMap<Db, RollupState>();

/**
 * Rolls up from `from` to now, coalesced per process: while a rollup runs, every request that comes in
 * joins one more run that starts when it ends (over the union of their ranges). Each caller's samples are
 * written before it asks, so that run includes them; crawls finishing together no longer re-roll the same
 * hour one after the other (each over every server of the hour), which held up the demo's crawls.
 */
function coalescedRollup(db: Db, from: Date): Promise<void> {
  let state = rollups.get(db);
  if (!state) rollups.set(db, (state = { running: null, next: null }));
  const st = state;
  const run = (fromMs: number): Promise<void> => {
    const p = rollupRange(db, new Date(fromMs), new Date(Math.max(Date.now(), fromMs))).finally(
      () => {
        const next = st.next;
        st.next = null;
        st.running = next
          ? run(next.fromMs).then(next.resolve, (err: unknown) => (next.reject(err), undefined))
          : null;
      },
    );
    return p;
  };
  if (st.running === null) {
    const p = run(from.getTime());
    st.running = p.catch(() => undefined);
    return p;
  }
  if (st.next) {
    st.next.fromMs = Math.min(st.next.fromMs, from.getTime());
    return st.next.promise;
  }
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  st.next = { fromMs: from.getTime(), promise, resolve, reject };
  return promise;
}

export async function finishCrawl(deps: CrawlDeps, job: FinishCrawlJob): Promise<void> {
  const crawl = await getCrawl(deps.db, job.crawlId);
  if (!crawl) return;
  let closed: Awaited<ReturnType<typeof closeCrawl>> | null = null;
  if (crawl.finishedAt === null) {
    if (!(await isCrawlComplete(deps.db, crawl.id))) return;
    closed = await closeCrawl(deps.db, crawl.id, {
      delistAfterMissedCrawls: deps.settings.delistAfterMissedCrawls,
      fakePortsPerIp: deps.settings.fakePortsPerIp,
      exemptCidrs: deps.settings.farmRuleExemptRanges,
    });
  }
  // Closed (here or by an earlier try of this job): a start a tick skipped meanwhile runs now, without
  // waiting for the shared-names rule, which may take its whole budget (DEFAULT_SHARED_NAMES_BUDGET_MS).
  await deps.sink.releaseCatchUp?.(crawl.key);
  if (closed?.finished) {
    // Before the roll-up, which leaves suspected fakes out of the population. A retry after the close
    // skips it: the next crawl's close checks again.
    const sharedPlayerNames = await checkSharedPlayerNames(deps.db, crawl.id, closed.startedAt, {
      ...(deps.settings.fakePlayers ? { fakePlayers: deps.settings.fakePlayers } : {}),
      onFailure: (err) =>
        deps.logger.warn(
          { crawl: crawl.key, err: err instanceof Error ? err.message : String(err) },
          "shared-names rule failed: its flags stay as the last check left them",
        ),
    });
    await logCrawlSummary(deps, crawl, { ...closed, sharedPlayerNames });
  }
  // Idempotent: re-rolling the crawl's hours gives the same rows.
  await coalescedRollup(deps.db, crawl.startedAt);
  // Player search is exact without it (the filter checks current names): a failure only leaves the table
  // larger until the next close.
  await compactPlayerSearch(deps.db).catch((err: unknown) =>
    deps.logger.warn(
      { crawl: crawl.key, err: err instanceof Error ? err.message : String(err) },
      "player search compaction failed: the next close compacts",
    ),
  );
  deps.onEvent?.({ type: "finished", crawlId: crawl.id });
}

/** Queries one server now (outside any crawl): state and life cycle only, no history sample. */
export async function requeryServer(
  deps: CrawlDeps,
  job: RequeryServerJob,
  signal?: AbortSignal,
): Promise<void> {
  const s = await deps.db.gameServer.findUnique({
    where: { id: job.serverId },
    select: {
      id: true,
      address: true,
      queryPort: true,
      protocol: true,
      managementRegistered: true,
    },
  });
  if (!s || s.managementRegistered) return;
  const serverId = toId(s.id);
  const verdict = (await currentPolicy(deps)).check(s.address);
  let outcome: BatchOutcome;
  if (!verdict.queryable) {
    outcome = { serverId, kind: "refused", isRelay: verdict.reason === "relay" };
  } else {
    const result = await deps.querier.query(
      { serverId, host: s.address, queryPort: s.queryPort, protocol: s.protocol },
      signal ?? new AbortController().signal,
    );
    outcome =
      result.kind === "answered"
        ? { serverId, kind: "answered", status: result.status, pingMs: result.pingMs }
        : { serverId, kind: "failed", code: result.code };
  }
  await writeServerOutcome(
    deps.db,
    outcome,
    deps.settings.offlineAfterFailures,
    deps.settings.fakePlayers,
  );
}
