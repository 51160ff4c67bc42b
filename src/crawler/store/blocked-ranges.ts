/**
 * The blocked_range rows as the crawler sees them, read at most every 10 s by each reader: a range blocked
 * through the API applies to game-server queries and to list sources' contacts within 10 s.
 */
import type { Db } from "../../shared/db";

const BLOCKED_CACHE_MS = 10_000;

export type BlockedRangeReader = () => Promise<readonly string[]>;

export function createBlockedRangeReader(db: Db): BlockedRangeReader {
  let cached: { at: number; cidrs: string[] } | null = null;
  return async () => {
    if (!cached || Date.now() - cached.at > BLOCKED_CACHE_MS) {
      const rows = await db.$queryRaw<
        { cidr: string }[]
      >`SELECT cidr::text AS cidr FROM blocked_range`;
      cached = { at: Date.now(), cidrs: rows.map((r) => r.cidr) };
    }
    return cached.cidrs;
  };
}
