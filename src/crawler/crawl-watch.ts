/**
 * Whether a running crawl is still open, for its list and query jobs: a job's signal aborts when the crawl is
 * closed or gone (its source disabled or removed: cancelOpenCrawls, or the crawl's rows deleted with the
 * source), so a running job stops sending to the source and its servers. One poll a second per crawl and
 * process serves every job of the crawl there: each batch job polling on its own timer read the same crawl
 * row about 32 times a second while a worker ran its 32 batch jobs (issue 14 item 2, the crawler's own CPU).
 */
import type { Db } from "../shared/db";
import { getCrawl } from "./store/crawl-store";

/** How often a crawl with running jobs is checked. */
const CANCEL_POLL_MS = 1000;

interface SharedWatch {
  /** What each watching job does when the crawl is found closed. */
  readonly onClosed: Set<() => void>;
  timer: NodeJS.Timeout | null;
}

/** Per database client, as the jobs of one process share theirs: crawl id → its watch. */
const watchesByDb = new WeakMap<Db, Map<number, SharedWatch>>();

export interface CrawlWatch {
  signal: AbortSignal;
  /** True when the signal aborted because the crawl was closed (not because `parent` did). */
  cancelled(): boolean;
  dispose(): void;
}

export function watchCrawl(db: Db, crawlId: number, parent?: AbortSignal): CrawlWatch {
  const controller = new AbortController();
  let cancelled = false;
  const onParent = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener("abort", onParent, { once: true });
  const unsubscribe = subscribe(db, crawlId, () => {
    cancelled = true;
    controller.abort(
      new DOMException("the crawl was closed (its source disabled or removed)", "AbortError"),
    );
  });
  return {
    signal: controller.signal,
    cancelled: () => cancelled,
    dispose() {
      unsubscribe();
      parent?.removeEventListener("abort", onParent);
    },
  };
}

function subscribe(db: Db, crawlId: number, onClosed: () => void): () => void {
  let watches = watchesByDb.get(db);
  if (!watches) {
    watches = new Map();
    watchesByDb.set(db, watches);
  }
  const byCrawl = watches;
  let watch = byCrawl.get(crawlId);
  if (!watch) {
    const created: SharedWatch = { onClosed: new Set(), timer: null };
    created.timer = setInterval(() => poll(db, crawlId, created, byCrawl), CANCEL_POLL_MS);
    created.timer.unref();
    byCrawl.set(crawlId, created);
    watch = created;
  }
  const shared = watch;
  shared.onClosed.add(onClosed);
  return () => {
    shared.onClosed.delete(onClosed);
    if (shared.onClosed.size === 0) stop(crawlId, shared, byCrawl);
  };
}

function stop(crawlId: number, watch: SharedWatch, byCrawl: Map<number, SharedWatch>): void {
  if (watch.timer !== null) clearInterval(watch.timer);
  watch.timer = null;
  if (byCrawl.get(crawlId) === watch) byCrawl.delete(crawlId);
}

function poll(
  db: Db,
  crawlId: number,
  watch: SharedWatch,
  byCrawl: Map<number, SharedWatch>,
): void {
  getCrawl(db, crawlId)
    .then((c) => {
      if (c !== null && c.finishedAt === null) return;
      stop(crawlId, watch, byCrawl);
      const jobs = [...watch.onClosed];
      watch.onClosed.clear();
      for (const onClosed of jobs) onClosed();
    })
    // An unreachable database is the outage guard's business (workers.ts), not a cancellation.
    .catch(() => undefined);
}
