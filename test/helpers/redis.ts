import { deleteRedisPrefix } from "../../src/shared/redis-prefix";
import { testRedisUrl } from "./queue-backend";

/**
 * Deletes every key under `prefix:` (a test's own queues and rate-limit counters), so a test leaves Redis as it
 * found it. Nothing to do when the tests run without Redis (their queues are in their own databases).
 */
export async function dropRedisPrefix(
  prefix: string,
  redisUrl: string | null = testRedisUrl,
): Promise<void> {
  if (redisUrl !== null) await deleteRedisPrefix(redisUrl, prefix);
}
