/**
 * Per-client fixed-window rate limit for reads. With Redis the counters are shared by every API
 * process (key `<prefix><client>:<window>`, expiring with the window); without Redis each process
 * counts for itself in memory. The answer says how long until the window ends, for a retry hint.
 */
import type { Redis } from 'ioredis';

export interface RateLimitOptions {
  /** Requests allowed per client per window; 0 disables the limit. */
  maxRequests: number;
  windowMs: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  hit(clientKey: string): Promise<RateDecision>;
}

// INCR then set the expiry on the first hit of a window, atomically; returns [count, ttl ms].
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`;

/** How long a read waits for Redis before it is let through uncounted. */
export const REDIS_LIMIT_TIMEOUT_MS = 250;

/**
 * Fails open: when Redis is down or slow (the shared connection queues commands while it reconnects),
 * reads are let through and `onError` is told, rather than the whole API hanging on a counter.
 */
export function createRedisRateLimiter(
  redis: Redis,
  keyPrefix: string,
  options: RateLimitOptions,
  onError: (err: unknown) => void = () => undefined,
  now: () => number = Date.now,
): RateLimiter {
  return {
    async hit(clientKey) {
      if (options.maxRequests <= 0) return { allowed: true };
      const window = Math.floor(now() / options.windowMs);
      const key = `${keyPrefix}${clientKey}:${window}`;
      let timer: NodeJS.Timeout | undefined;
      let reply: [number, number] | null;
      try {
        // ioredis commands cannot be cancelled; the timer only stops us waiting for this one.
        const timeout = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), REDIS_LIMIT_TIMEOUT_MS);
        });
        reply = await Promise.race([redis.eval(HIT_SCRIPT, 1, key, String(options.windowMs)) as Promise<[number, number]>, timeout]);
        if (reply === null) onError(new Error(`rate-limit counter: no answer from Redis within ${REDIS_LIMIT_TIMEOUT_MS} ms`));
      } catch (err) {
        onError(err);
        reply = null;
      } finally {
        clearTimeout(timer);
      }
      if (reply === null) return { allowed: true };
      const [count, ttlMs] = reply;
      if (count <= options.maxRequests) return { allowed: true };
      return { allowed: false, retryAfterMs: ttlMs > 0 ? ttlMs : options.windowMs };
    },
  };
}

export function createMemoryRateLimiter(options: RateLimitOptions, now: () => number = Date.now): RateLimiter {
  let currentWindow = -1;
  let counts = new Map<string, number>();
  return {
    hit(clientKey) {
      if (options.maxRequests <= 0) return Promise.resolve({ allowed: true });
      const t = now();
      const window = Math.floor(t / options.windowMs);
      if (window !== currentWindow) {
        // A new window forgets every client at once, so the map never outgrows one window's clients.
        currentWindow = window;
        counts = new Map();
      }
      const count = (counts.get(clientKey) ?? 0) + 1;
      counts.set(clientKey, count);
      if (count <= options.maxRequests) return Promise.resolve({ allowed: true });
      return Promise.resolve({ allowed: false, retryAfterMs: (window + 1) * options.windowMs - t });
    },
  };
}
