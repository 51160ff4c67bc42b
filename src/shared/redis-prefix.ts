import IORedis from "ioredis";

/**
 * Deletes every key under `prefix:` (one gsindex instance's queues and rate-limit counters): how tests
 * and benchmarks leave a shared Redis as they found it. SCAN, never KEYS, so a busy Redis is not blocked.
 */
export async function deleteRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}
