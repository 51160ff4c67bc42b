/**
 * Transactions straight on node-postgres, for the crawl's big multi-row writes (listings, query batches):
 * Prisma's raw queries cost CPU per call and keep memory that grows with the largest parameter they were
 * given (a listing's jsonb), which made the crawler's RSS grow with the fleet (issue 14). Parameters go as
 * text, so SQL casts each one that is not text (`$1::bigint`, `$2::timestamptz`, `$3::jsonb`).
 */
import type { PgClient, PgPool } from "../../shared/db";
import { toId } from "../../shared/ids";

export type Tx = PgClient;

/** Runs `fn` in one transaction on a connection of `pool`: committed if it returns, rolled back if it throws. */
export async function inTransaction<T>(pool: PgPool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection lost while checked out (PostgreSQL restarted, the backend terminated) is an 'error' event
  // on the client, which without a listener is an uncaught exception that ends the process; the pending
  // query rejects with the same error, so here it only marks the connection as not to be reused.
  const onError = (err: Error): void => {
    broken = err;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch((rollbackErr: unknown) => {
      // A connection that cannot roll back is not given back to the pool.
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

/** Rows of a statement, typed by the caller. */
export async function rowsOf<T>(tx: Tx, sql: string, params: unknown[]): Promise<T[]> {
  return (await tx.query(sql, params)).rows as T[];
}

/** Rows a statement changed. */
export async function countOf(tx: Tx, sql: string, params: unknown[]): Promise<number> {
  return (await tx.query(sql, params)).rowCount ?? 0;
}

/** A bigint id as node-postgres reads it (text) as the number the code carries. */
export function idOf(value: string | number): number {
  return toId(typeof value === "string" ? BigInt(value) : value);
}
