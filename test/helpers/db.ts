/**
 * A fresh, uniquely named PostgreSQL database per test suite, migrated with the real runner, dropped
 * afterwards. Uses the server in TEST_DATABASE_URL / DATABASE_URL (default the local one).
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { migrate } from "../../src/migrate";
import { createDb, type Db } from "../../src/shared/db";
import { withDatabase } from "../../src/shared/services";

export const TEST_SERVER_URL =
  process.env.TEST_DATABASE_URL ??
  process.env.DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/postgres";

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(TEST_SERVER_URL, "postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  db: Db;
  /** Disconnects the client and drops the database. */
  drop(): Promise<void>;
}

/** `migrationsDir`: migrate with the migrations there instead of the repository's (a database at an older migration). */
export async function createTestDatabase(
  prefix = "gsindex_test",
  options: { migrationsDir?: string } = {},
): Promise<TestDatabase> {
  const name =
    `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`.toLowerCase();
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = withDatabase(TEST_SERVER_URL, name);
  await migrate(url, options.migrationsDir ? { dir: options.migrationsDir } : {});
  const db = createDb(url, { max: 5 });
  return {
    name,
    url,
    db,
    async drop() {
      await db.$disconnect();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

/** Whether the server can compress with LZ4 (built with --with-lz4): the compression methods it lists. */
export async function serverHasLz4(db: Db): Promise<boolean> {
  const [r] = await db.$queryRaw<{ lz4: boolean }[]>`
    SELECT 'lz4' = ANY (enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`;
  return r?.lz4 ?? false;
}

/** How each of a game server's large values is compressed (null: stored as it is). */
export async function answerCompression(
  db: Db,
  queryPort: number,
): Promise<{ rules: string | null; player_list: string | null }> {
  const [r] = await db.$queryRaw<{ rules: string | null; player_list: string | null }[]>`
    SELECT pg_column_compression(rules) AS rules, pg_column_compression(player_list) AS player_list
    FROM game_server WHERE query_port = ${queryPort}`;
  if (!r) throw new Error(`no game server on query port ${queryPort}`);
  return r;
}
