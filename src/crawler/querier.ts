/**
 * What the crawler needs from the query side: one target in, one outcome out. An unreachable or
 * broken game server is an outcome ('failed' with its ProtocolError code), never a thrown error;
 * a Querier throws only when our side fails.
 */
import { linkAbort, type ServerStatus } from "../protocol";

export interface QueryTarget {
  serverId: number;
  host: string;
  queryPort: number;
  protocol: string;
}

export type QueryOutcome =
  | { kind: "answered"; status: ServerStatus; pingMs: number | null }
  | { kind: "failed"; code: string; message?: string };

export interface Querier {
  query(target: QueryTarget, signal: AbortSignal): Promise<QueryOutcome>;
  /**
   * Resolves once a query sent now would not have to wait for a slot (a querier with a cap on queries in
   * flight, limitInFlight), or when `signal` or `stopping` aborts. A batch job waits for it before it sends
   * its queries, so the jobs of a process start as the slots free up instead of queueing behind each other.
   * `stopping` is the worker's stop: a job still waiting then goes back to its queue unstarted.
   * Absent: always free.
   */
  whenFree?(signal: AbortSignal, stopping?: AbortSignal): Promise<void>;
}

/** Runs `fn` over `items` with at most `limit` in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  });
  await Promise.all(runners);
  return results;
}

/**
 * Caps the queries in flight across everything that shares this querier (every batch job of a worker
 * process), first come first served. Batches then overlap: while one waits for its slowest servers
 * (a silent one costs the whole timeout), the others keep the slots busy, so a slow tail no longer
 * idles the crawl, and the cap still bounds sockets' bursts and memory.
 *
 * whenFree() holds a caller back while every slot is taken or promised (queries waiting for one), first
 * come first served too, and lets one through each time a query ends with a slot left: the queue of
 * queries waiting for a slot stays within about one batch, however many batch jobs the process runs.
 */
export function limitInFlight(querier: Querier, limit: number): Querier {
  let running = 0;
  const waiting: Array<() => void> = [];
  const held: Array<() => void> = [];
  const free = (): boolean => running + waiting.length < limit;
  // One held caller at a time, each on a turn of the event loop of its own, so the one let through has
  // sent its queries (or found it has none to send) before the next is weighed.
  let pumping = false;
  /** No held caller goes through in the rest of this turn; `next` runs on the next one. */
  const takeTurn = (next: () => void): void => {
    pumping = true;
    setImmediate(() => {
      pumping = false;
      next();
    });
  };
  const pump = (): void => {
    if (pumping || held.length === 0) return;
    takeTurn(() => {
      if (!free()) return;
      held.shift()?.();
      pump();
    });
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
    pump();
  };
  return {
    async query(target, signal) {
      if (running < limit) running += 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        // Aborted while it waited for a slot (its crawl cancelled, the worker stopping): nothing is sent.
        if (signal.aborted)
          return { kind: "failed", code: "ABORTED", message: "aborted before it was sent" };
        return await querier.query(target, signal);
      } finally {
        release();
      }
    },
    whenFree(signal, stopping) {
      if (signal.aborted || stopping?.aborted === true) return Promise.resolve();
      if (held.length === 0 && !pumping && free()) {
        // Through at once, and this turn is its own: a caller arriving before this one has sent its queries
        // (batch jobs that start together) is held, not let through on a count of slots it is about to take.
        takeTurn(pump);
        return Promise.resolve();
      }
      // linkAbort: one listener per signal however many callers are held. The stop signal is the process's
      // own, and a listener per held batch job (up to WORKER_CONCURRENCY - 1) tripped Node's
      // MaxListenersExceededWarning, a "possible memory leak" in the operator's log.
      return new Promise<void>((resolve) => {
        let unlinkSignal = (): void => undefined;
        let unlinkStopping = (): void => undefined;
        const go = (): void => {
          unlinkSignal();
          unlinkStopping();
          resolve();
        };
        const onAbort = (): void => {
          const at = held.indexOf(go);
          if (at >= 0) held.splice(at, 1);
          go();
        };
        held.push(go);
        unlinkSignal = linkAbort(signal, onAbort);
        unlinkStopping = linkAbort(stopping, onAbort);
        pump();
      });
    },
  };
}
