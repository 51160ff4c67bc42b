/**
 * Fresh databases for the bench, never the user's: named gsindex_bench_<part>_<run>, created from scratch
 * (dropped first if a previous run left one), migrated with the project's own runner, dropped at the
 * end unless --keep-db.
 */
import { Client } from "pg";
import path from "node:path";
import { migrate } from "../../src/migrate";
import { withDatabase } from "../../src/shared/services";
import { repoRoot, RUN_OCTET } from "./child";

export interface BenchDb {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export function adminDatabaseUrl(): string {
  return (
    process.env.BENCH_ADMIN_DATABASE_URL ??
    process.env.DATABASE_URL ??
    "postgres://postgres@127.0.0.1:5432/postgres"
  );
}

async function admin<T>(body: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(adminDatabaseUrl(), "postgres") });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

export async function createBenchDb(part: string): Promise<BenchDb> {
  if (!/^[a-z0-9_]+$/.test(part)) throw new Error(`bad database suffix ${part}`);
  const name = `gsindex_bench_${part}_${RUN_OCTET}`;
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${name}`);
  });
  const url = withDatabase(adminDatabaseUrl(), name);
  await migrate(url, { dir: path.join(repoRoot(), "prisma", "migrations") });
  return {
    name,
    url,
    drop: () =>
      admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

/** A connected pg client for bulk SQL; `SET` options apply to this session only. */
export async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query("SET statement_timeout = 0");
  return client;
}

/** Size on disk of the named relations with their indexes and TOAST (pg_total_relation_size). */
export async function totalBytes(client: Client, relations: string[]): Promise<number> {
  if (relations.length === 0) return 0;
  const r = await client.query<{ b: string }>(
    "SELECT COALESCE(sum(pg_total_relation_size(quote_ident(x)::regclass)), 0)::text AS b FROM unnest($1::text[]) AS x",
    [relations],
  );
  return Number(r.rows[0]?.b ?? 0);
}

/**
 * Backends connected to the client's database other than the client's own: a part's PostgreSQL CPU, without
 * other work on a shared server (every postgres process would count that too).
 */
export async function otherBackendPids(c: Client): Promise<number[]> {
  const r = await c.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
  );
  return r.rows.map((row) => row.pid);
}
