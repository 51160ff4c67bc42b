/**
 * Applies prisma/migrations/<name>/migration.sql in name order, recording each in Prisma's own
 * `_prisma_migrations` table (sha256 checksum, same columns), so `prisma migrate deploy` stays
 * compatible where Prisma's native schema engine can run. Prisma 7 cannot download that engine here.
 *
 * Safe to run concurrently (a session advisory lock serialises runners) and repeatedly (applied
 * migrations are skipped). Each migration runs in one transaction: it applies wholly or not at all.
 */
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { Client } from "pg";

/** Any constant; shared by every gsindex migrator. */
const ADVISORY_LOCK_KEY = 7_271_004;

export const MIGRATIONS_DIR = path.resolve(__dirname, "..", "prisma", "migrations");

export interface MigrateResult {
  applied: string[];
  skipped: string[];
}

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "MigrationError";
  }
}

interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir: string = MIGRATIONS_DIR): MigrationFile[] {
  if (!existsSync(dir)) throw new MigrationError(`migrations folder not found: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export async function migrate(
  databaseUrl: string,
  options: { dir?: string; log?: (line: string) => void } = {},
): Promise<MigrateResult> {
  const migrations = readMigrations(options.dir);
  const log = options.log ?? (() => undefined);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [ADVISORY_LOCK_KEY]);
    try {
      await client.query(CREATE_TABLE);
      const { rows } = await client.query<{
        migration_name: string;
        checksum: string;
        finished_at: Date | null;
        rolled_back_at: Date | null;
      }>('SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"');
      const done = new Map<string, string>();
      for (const row of rows) {
        if (row.rolled_back_at !== null) continue;
        if (row.finished_at === null) {
          throw new MigrationError(
            `migration ${row.migration_name} was started but never finished; resolve it by hand`,
          );
        }
        done.set(row.migration_name, row.checksum);
      }
      const result: MigrateResult = { applied: [], skipped: [] };
      for (const m of migrations) {
        const checksum = done.get(m.name);
        if (checksum !== undefined) {
          if (checksum !== m.checksum)
            throw new MigrationError(
              `migration ${m.name} was modified after it was applied (checksum differs)`,
            );
          result.skipped.push(m.name);
          continue;
        }
        const id = randomUUID();
        await client.query("BEGIN");
        try {
          await client.query(
            'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
            [id, m.checksum, m.name],
          );
          await client.query(m.sql);
          await client.query(
            'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1',
            [id],
          );
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK");
          throw new MigrationError(
            `migration ${m.name} failed: ${err instanceof Error ? err.message : String(err)}`,
            { cause: err },
          );
        }
        log(`applied ${m.name}`);
        result.applied.push(m.name);
      }
      return result;
    } finally {
      await client
        .query("SELECT pg_advisory_unlock($1)", [ADVISORY_LOCK_KEY])
        .catch(() => undefined);
    }
  } finally {
    await client.end();
  }
}

if (require.main === module) {
  // `node dist/migrate.js`: migrate the configured database.
  const { loadConfig } = require("./shared/config") as typeof import("./shared/config");
  migrate(loadConfig().databaseUrl, { log: (line) => process.stderr.write(line + "\n") })
    .then((r) =>
      process.stderr.write(
        `migrations: ${r.applied.length} applied, ${r.skipped.length} already applied\n`,
      ),
    )
    .catch((err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    });
}
