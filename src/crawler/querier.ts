/**
 * What the crawler needs from the query side: one target in, one outcome out. An unreachable or
 * broken game server is an outcome ('failed' with its ProtocolError code), never a thrown error;
 * a Querier throws only when our side fails.
 */
import type { ServerStatus } from "../protocol";

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
 */
export function limitInFlight(querier: Querier, limit: number): Querier {
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
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
  };
}
