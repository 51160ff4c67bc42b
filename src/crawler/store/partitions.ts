/**
 * server_sample is range-partitioned by crawl_at, one partition per UTC day (server_sample_pYYYYMMDD).
 * Partitions are created before a crawl writes into them and dropped wholesale once the raw window has
 * passed (and the rollups cover them): no DELETE, no vacuum debt. See docs/storage.md.
 */
import type { Db } from "../../shared/db";
import { DAY_MS, utcDay } from "../../history/time";

/** Any constant; serialises partition DDL between workers. */
const PARTITION_LOCK_KEY = 7_271_005;

export function partitionName(day: Date): string {
  return `server_sample_p${day.toISOString().slice(0, 10).replace(/-/g, "")}`;
}

const known = new WeakMap<Db, Set<string>>();

/** Creates the partition holding `at` (idempotent, safe between concurrent workers). */
export async function ensureSamplePartition(db: Db, at: Date): Promise<void> {
  const day = utcDay(at);
  const name = partitionName(day);
  let seen = known.get(db);
  if (!seen) known.set(db, (seen = new Set()));
  if (seen.has(name)) return;
  const from = day.toISOString();
  const to = new Date(day.getTime() + DAY_MS).toISOString();
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`;
    // Identifiers and bounds come from a Date, never from input.
    await tx.$executeRawUnsafe(
      `CREATE TABLE IF NOT EXISTS "${name}" PARTITION OF "server_sample" FOR VALUES FROM ('${from}') TO ('${to}')`,
    );
  });
  seen.add(name);
}

export interface SamplePartition {
  name: string;
  day: Date;
}

export async function listSamplePartitions(db: Db): Promise<SamplePartition[]> {
  const rows = await db.$queryRaw<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
    WHERE p.relname = 'server_sample' ORDER BY c.relname`;
  return rows.flatMap((r) => {
    const m = /^server_sample_p(\d{4})(\d{2})(\d{2})$/.exec(r.name);
    return m ? [{ name: r.name, day: new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`) }] : [];
  });
}

/** Drops every day partition that ends on or before `before`. Returns the dropped names. */
export async function dropSamplePartitionsBefore(db: Db, before: Date): Promise<string[]> {
  const dropped: string[] = [];
  for (const p of await listSamplePartitions(db)) {
    if (p.day.getTime() + DAY_MS > before.getTime()) continue;
    await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`;
      await tx.$executeRawUnsafe(`DROP TABLE IF EXISTS "${p.name}"`);
    });
    known.get(db)?.delete(p.name);
    dropped.push(p.name);
  }
  return dropped;
}
