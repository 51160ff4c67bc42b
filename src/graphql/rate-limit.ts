/**
 * Per-client fixed-window counters: the read rate limit (units of cost per window) and the count of
 * failed authentications. With Redis the counters are shared by every API process (key
 * `<prefix><client>:<window>`, expiring with the window); with the queues on PostgreSQL they are shared
 * through an unlogged table in the queue schema (createPostgresRateLimiter); otherwise each process
 * counts for itself in memory. Every answer says how many units are left and when the window ends (for Retry-After and
 * the X-RateLimit headers).
 */
import type { Redis } from "ioredis";
import type { RawSql } from "../shared/db";

export interface RateLimitOptions {
  /** Units allowed per client per window; 0 disables the limit. */
  maxRequests: number;
  windowMs: number;
}

export interface RateDecision {
  /** false when this hit took the client's count over the limit. */
  allowed: boolean;
  /** Units counted in this window, this hit included. */
  count: number;
  /** Units left in this window. */
  remaining: number;
  /** Milliseconds until the window ends and the count starts again. */
  resetMs: number;
}

export interface RateLimiter {
  /** The units allowed per window; 0 when the limit is off (every hit is allowed and nothing is counted). */
  readonly limit: number;
  /** Counts `cost` units (0 only reads the count) and says whether the client is still within the limit. */
  hit(clientKey: string, cost?: number): Promise<RateDecision>;
}

/** Whole seconds to wait, at least 1: for Retry-After and X-RateLimit-Reset. */
export function secondsUntilReset(decision: RateDecision): number {
  return Math.max(1, Math.ceil(decision.resetMs / 1000));
}

const UNLIMITED: RateDecision = { allowed: true, count: 0, remaining: 0, resetMs: 0 };

function decide(count: number, resetMs: number, limit: number): RateDecision {
  return { allowed: count <= limit, count, remaining: Math.max(0, limit - count), resetMs };
}

// INCRBY then give the key the window's expiry if it has none yet, atomically; returns [count, ttl ms].
const HIT_SCRIPT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`;

/** How long a hit waits for Redis (or PostgreSQL) before this process counts it by itself. */
export const REDIS_LIMIT_TIMEOUT_MS = 250;

/** Adds `cost` to the counter `key` (expiring `windowMs` after its first hit); answers [count, ms to expiry]. */
type SharedCounter = (key: string, windowMs: number, cost: number) => Promise<[number, number]>;

/**
 * When Redis is down or slow (the shared connection queues commands while it reconnects), the hit is
 * counted by this process alone (a memory limiter) and `onError` is told, rather than the whole API
 * hanging on a counter or a hostile client going uncounted.
 */
export function createRedisRateLimiter(
  redis: Redis,
  keyPrefix: string,
  options: RateLimitOptions,
  onError: (err: unknown) => void = () => undefined,
  now: () => number = Date.now,
): RateLimiter {
  const counter: SharedCounter = (key, windowMs, cost) =>
    redis.eval(HIT_SCRIPT, 1, key, String(windowMs), String(cost)) as Promise<[number, number]>;
  return sharedRateLimiter(counter, "Redis", keyPrefix, options, onError, now);
}

/**
 * The same counters in PostgreSQL, for when the queues live there and there is no Redis: one row per
 * client and window in an unlogged table (not written to the WAL: counters need not survive a crash) of
 * the queue schema, added to with one upsert; rows of past windows are deleted every minute or so.
 */
export function createPostgresRateLimiter(
  db: RawSql,
  schema: string,
  keyPrefix: string,
  options: RateLimitOptions,
  onError: (err: unknown) => void = () => undefined,
  now: () => number = Date.now,
): RateLimiter {
  const table = `"${schema.replace(/"/g, '""')}".api_rate_limit`;
  let created: Promise<void> | null = null;
  let lastSweepMs = 0;
  const ensureTable = (): Promise<void> => {
    created ??= (async () => {
      await db.$executeRawUnsafe(`create schema if not exists "${schema.replace(/"/g, '""')}"`);
      await db.$executeRawUnsafe(
        `create unlogged table if not exists ${table} (key text primary key, count bigint not null, expires_at_ms bigint not null)`,
      );
    })().catch((err: unknown) => {
      created = null;
      throw err;
    });
    return created;
  };
  const counter: SharedCounter = async (key, windowMs, cost) => {
    await ensureTable();
    const t = now();
    if (t - lastSweepMs > 60_000) {
      lastSweepMs = t;
      db.$executeRawUnsafe(`delete from ${table} where expires_at_ms < $1`, t).catch(onError);
    }
    const rows = await db.$queryRawUnsafe<
      Array<{ count: bigint | number; expires_at_ms: bigint | number }>
    >(
      `insert into ${table} as r (key, count, expires_at_ms) values ($1, $2, $3) on conflict (key) do update set count = r.count + excluded.count returning count, expires_at_ms`,
      key,
      cost,
      t + windowMs,
    );
    const row = rows[0];
    if (row === undefined) throw new Error("rate-limit counter: the upsert returned no row");
    return [Number(row.count), Number(row.expires_at_ms) - t];
  };
  return sharedRateLimiter(counter, "PostgreSQL", keyPrefix, options, onError, now);
}

function sharedRateLimiter(
  counter: SharedCounter,
  store: string,
  keyPrefix: string,
  options: RateLimitOptions,
  onError: (err: unknown) => void,
  now: () => number,
): RateLimiter {
  const fallback = createMemoryRateLimiter(options, now);
  return {
    limit: options.maxRequests,
    async hit(clientKey, cost = 1) {
      if (options.maxRequests <= 0) return UNLIMITED;
      const window = Math.floor(now() / options.windowMs);
      const key = `${keyPrefix}${clientKey}:${window}`;
      let timer: NodeJS.Timeout | undefined;
      let reply: [number, number] | null;
      try {
        // Neither ioredis nor pg can cancel a command; the timer only stops us waiting for this one.
        const timeout = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), REDIS_LIMIT_TIMEOUT_MS);
        });
        reply = await Promise.race([counter(key, options.windowMs, cost), timeout]);
        if (reply === null)
          onError(
            new Error(
              `rate-limit counter: no answer from ${store} within ${REDIS_LIMIT_TIMEOUT_MS} ms`,
            ),
          );
      } catch (err) {
        onError(err);
        reply = null;
      } finally {
        clearTimeout(timer);
      }
      if (reply === null) return fallback.hit(clientKey, cost);
      const [count, ttlMs] = reply;
      return decide(count, ttlMs > 0 ? ttlMs : options.windowMs, options.maxRequests);
    },
  };
}

export function createMemoryRateLimiter(
  options: RateLimitOptions,
  now: () => number = Date.now,
): RateLimiter {
  let currentWindow = -1;
  let counts = new Map<string, number>();
  return {
    limit: options.maxRequests,
    hit(clientKey, cost = 1) {
      if (options.maxRequests <= 0) return Promise.resolve(UNLIMITED);
      const t = now();
      const window = Math.floor(t / options.windowMs);
      if (window !== currentWindow) {
        // A new window forgets every client at once, so the map never outgrows one window's clients.
        currentWindow = window;
        counts = new Map();
      }
      const count = (counts.get(clientKey) ?? 0) + cost;
      if (cost > 0) counts.set(clientKey, count);
      return Promise.resolve(
        decide(count, (window + 1) * options.windowMs - t, options.maxRequests),
      );
    },
  };
}
