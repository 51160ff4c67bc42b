import { deleteRedisPrefix } from "../../src/shared/redis-prefix";

/** Deletes every key under `prefix:` (a test's own queues and rate-limit counters), so a test leaves Redis as it found it. */
export function dropRedisPrefix(
  prefix: string,
  redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
): Promise<void> {
  return deleteRedisPrefix(redisUrl, prefix);
}
