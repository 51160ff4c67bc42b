/** The PrismaClient over node-postgres (@prisma/adapter-pg). One instance per process. */
import { PrismaPg } from "@prisma/adapter-pg";
import { Pool } from "pg";
import { PrismaClient } from "../generated/prisma/client";

export type Db = PrismaClient;
export { PrismaClient };
export type { Pool as PgPool, PoolClient as PgClient } from "pg";

/** What the small unlogged-table stores (API rate limit, master pace) need of a client: Prisma's raw queries. */
export interface RawSql {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

/** The node-postgres pool under each client createDb made (see pgPoolOf). */
const pools = new WeakMap<object, Pool>();

/**
 * Says which pool a PrismaClient made elsewhere runs on (a test's client with query logging), so the
 * crawl's writes use that pool too. createDb does this for its own clients.
 */
export function registerPgPool(db: object, pool: Pool): void {
  pools.set(db, pool);
}

export function createDb(databaseUrl: string, options: { max?: number } = {}): Db {
  // History is bucketed by UTC day and hour in SQL (timestamptz → date casts): pin the session to UTC
  // whatever the server's or database's default time zone.
  const pool = new Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    options: "-c TimeZone=UTC",
  });
  // An idle connection that breaks (PostgreSQL restarted) is dropped by the pool and the next query
  // connects again; without a listener its error would be thrown as an uncaught 'error' event.
  pool.on("error", () => undefined);
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  const db = new PrismaClient({ adapter });
  registerPgPool(db, pool);
  return db;
}

/**
 * The pool Prisma's adapter runs on, for the crawl's big writes: they go to PostgreSQL directly, as
 * Prisma keeps memory that grows with large parameters (a listing's or a batch's jsonb) and costs CPU
 * per call on top of the driver's (docs/BENCHMARKS-history.md, "End-to-end crawl"). One pool, one
 * connection limit, for both.
 */
export function pgPoolOf(db: Db): Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error("this PrismaClient was not made by createDb: it has no pg pool");
  return pool;
}
