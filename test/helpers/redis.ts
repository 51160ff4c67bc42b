import IORedis from 'ioredis';

/** Deletes every key under `prefix:` (a test's own queues and rate-limit counters), so a test leaves Redis as it found it. */
export async function dropRedisPrefix(prefix: string, redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<void> {
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
