/**
 * One pace per master address, shared by every listing of it: a worker lists up to four regions of one master
 * at once (the crawl queue's concurrency), and more workers may list it too, while the master counts requests
 * per client address. Each listing pacing itself sent four times the pace and tripped the master's limit. Here
 * every request reserves the master's next free send slot (`intervalMs` after the slot before it) in one
 * atomic step, on Redis (a key under the queue prefix, on Redis's clock) or, with the queues on PostgreSQL, in
 * an unlogged table of the queue schema; without either (`crawl --once`) in this process's memory.
 * When the shared store does not answer in time, the request is paced by this process alone (and `onError`
 * told): a listing never hangs on its pacing.
 */
import type { Redis } from "ioredis";
import type { RawSql } from "../shared/db";

export interface MasterPacer {
  /**
   * Waits until this request's send slot of `masterKey`, `intervalMs` after the slot reserved before it
   * (by any listing). Resolves early when `signal` aborts: the caller checks it.
   */
  waitTurn(masterKey: string, intervalMs: number, signal?: AbortSignal): Promise<void>;
}

/** How long a reservation waits for Redis or PostgreSQL before this process paces the request alone. */
// Requests to a paced master are seconds apart: waiting a second for the store costs nothing.
export const SHARED_PACE_TIMEOUT_MS = 1000;

/** Reserves a slot: answers how long to wait for it, in ms from now. */
type Reserve = (masterKey: string, intervalMs: number) => Promise<number>;

function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

function memoryReserve(now: () => number = Date.now): Reserve {
  const next = new Map<string, number>();
  return (masterKey, intervalMs) => {
    const t = now();
    const at = Math.max(t, next.get(masterKey) ?? 0);
    next.set(masterKey, at + intervalMs);
    // Forget masters whose slots are long past, so the map holds only those being listed.
    if (next.size > 1000) for (const [k, v] of next) if (v < t) next.delete(k);
    return Promise.resolve(at - t);
  };
}

function pacerOver(reserve: Reserve, store: string, onError: (err: unknown) => void): MasterPacer {
  const fallback = memoryReserve();
  return {
    async waitTurn(masterKey, intervalMs, signal) {
      let timer: NodeJS.Timeout | undefined;
      let waitMs: number | null;
      try {
        // Neither ioredis nor pg can cancel a command; the timer only stops us waiting for this one.
        const timeout = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), SHARED_PACE_TIMEOUT_MS);
        });
        waitMs = await Promise.race([reserve(masterKey, intervalMs), timeout]);
        if (waitMs === null)
          onError(
            new Error(`master pace: no answer from ${store} within ${SHARED_PACE_TIMEOUT_MS} ms`),
          );
      } catch (err) {
        onError(err);
        waitMs = null;
      } finally {
        clearTimeout(timer);
      }
      waitMs ??= await fallback(masterKey, intervalMs);
      await sleepUnlessAborted(waitMs, signal);
    },
  };
}

/** The pace of this process's listings only. */
export function createMemoryPacer(now?: () => number): MasterPacer {
  return pacerOver(memoryReserve(now), "memory", () => undefined);
}

// The slot is max(now, next free) on Redis's clock, so processes on machines whose clocks differ agree; the key
// outlives its slot by a minute (a master not listed any more leaves nothing behind). Returns ms to wait.
const RESERVE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local at = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
local interval = tonumber(ARGV[1])
redis.call('SET', KEYS[1], at + interval, 'PX', at + interval - now + 60000)
return at - now
`;

/** `keyPrefix` ends with the separator: the key is `<keyPrefix><masterKey>`. */
export function createRedisPacer(
  redis: Redis,
  keyPrefix: string,
  onError: (err: unknown) => void = () => undefined,
): MasterPacer {
  const reserve: Reserve = async (masterKey, intervalMs) =>
    Number(
      await redis.eval(
        RESERVE_SCRIPT,
        1,
        `${keyPrefix}${masterKey}`,
        String(Math.ceil(intervalMs)),
      ),
    );
  return pacerOver(reserve, "Redis", onError);
}

/**
 * The same reservation in PostgreSQL, on its clock: one row per master in an unlogged table of the queue
 * schema (a pace need not survive a crash), moved on by one upsert under the row's lock.
 */
export function createPostgresPacer(
  db: RawSql,
  schema: string,
  onError: (err: unknown) => void = () => undefined,
): MasterPacer {
  const quoted = `"${schema.replace(/"/g, '""')}"`;
  const table = `${quoted}.master_pace`;
  let created: Promise<void> | null = null;
  const ensureTable = (): Promise<void> => {
    // "if not exists" is not safe against a concurrent create: the loser's unique violation (or, for the
    // table, its row type's 42710 duplicate_object) means it exists.
    const tolerant = (sql: string) =>
      db.$executeRawUnsafe(sql).catch((err: unknown) => {
        if (!/\b(23505|42P06|42P07|42710)\b/.test(String(err))) throw err;
        return 0;
      });
    created ??= (async () => {
      await tolerant(`create schema if not exists ${quoted}`);
      await tolerant(
        `create unlogged table if not exists ${table} (master text primary key, next_at_ms bigint not null)`,
      );
    })().catch((err: unknown) => {
      created = null;
      throw err;
    });
    return created;
  };
  const reserve: Reserve = async (masterKey, intervalMs) => {
    await ensureTable();
    const rows = await db.$queryRawUnsafe<Array<{ wait_ms: bigint | number }>>(
      `with clock as (select (extract(epoch from clock_timestamp()) * 1000)::bigint as now_ms)
       insert into ${table} as p (master, next_at_ms) select $1, clock.now_ms + $2 from clock
       on conflict (master) do update set next_at_ms = greatest(p.next_at_ms, (select now_ms from clock)) + $2
       returning p.next_at_ms - $2 - (select now_ms from clock) as wait_ms`,
      masterKey,
      Math.ceil(intervalMs),
    );
    const row = rows[0];
    if (row === undefined) throw new Error("master pace: the upsert returned no row");
    return Math.max(0, Number(row.wait_ms));
  };
  return pacerOver(reserve, "PostgreSQL", onError);
}
