/**
 * `npm start` on the embedded PostgreSQL (GSINDEX_SKIP_LOCAL_SERVICES=1), the way a service manager or
 * `env -i` starts it: no locale variables at all. The cluster is created UTF8 anyway and the migrations
 * run; and a SIGTERM to the whole process group (what a terminal's Ctrl-C or a `kill -- -PGID` does)
 * stops gsindex gracefully on a database that is still up, then the database, leaving no server behind.
 * Runs the real wrapper script (embedded PostgreSQL is started from dist/, as `npm start` does).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { freePort } from "../../src/shared/free-port";
import { canQueryPostgres, folderClosedToOthers } from "../../src/shared/services";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, "..", "..");
const SCRIPT = path.join(ROOT, "scripts", "with-services.js");
const CLI = path.join(ROOT, "bin", "gsindex.js");

/** A root checkout the postgres user cannot enter stops with a message instead (services.int.test.ts). */
const closed = folderClosedToOthers(ROOT);
const describeEmbedded = closed === null ? describe : describe.skip;
if (closed !== null)
  console.log(`embedded PostgreSQL tests skipped: the postgres user cannot enter ${closed}`);

describeEmbedded("npm start on the embedded PostgreSQL with no locale in the environment", () => {
  let projectDir: string;
  let pgPort: number;
  let apiPort: number;
  let child: ChildProcess;
  let output = "";
  let exited: Promise<number | null>;

  const dataDir = () => path.join(projectDir, ".data", "postgres");
  const databaseUrl = (database: string) =>
    `postgres://postgres:gsindex@127.0.0.1:${pgPort}/${database}`;

  beforeAll(async () => {
    projectDir = mkdtempSync(path.join(os.tmpdir(), "gsindex-embedded-"));
    chmodSync(projectDir, 0o755); // PostgreSQL runs as the postgres user and must reach its data folder
    pgPort = await freePort();
    apiPort = await freePort();
    // Nothing but what a service manager gives: no LANG, no LC_*.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GSINDEX_PROJECT_DIR: projectDir,
      GSINDEX_SKIP_LOCAL_SERVICES: "1",
      GSINDEX_EMBEDDED_PG_PORT: String(pgPort),
      QUEUE_BACKEND: "postgres",
      API_HOST: "127.0.0.1",
      API_PORT: String(apiPort),
      MANAGEMENT_HOST: "127.0.0.1",
      MANAGEMENT_PORT: String(await freePort()),
      MASTER_SOURCES: "[]",
      STOP_GRACE_MS: "5000",
      LOG_LEVEL: "info",
    };
    // A process group of its own, so the test can signal the group as a terminal does.
    child = spawn(
      process.execPath,
      [SCRIPT, "--database", "gsindex", "--", process.execPath, CLI, "serve"],
      { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout?.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString("utf8")));
    exited = new Promise((resolve) => child.once("close", (code) => resolve(code)));
  });

  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, "SIGKILL");
      await exited;
    }
    // A server the run left behind (a failed test) is stopped, so it does not outlive the test.
    const pidFile = path.join(dataDir(), "postmaster.pid");
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
      try {
        process.kill(pid, "SIGQUIT");
        await waitFor("the embedded PostgreSQL to stop", () => !existsSync(pidFile), {
          timeoutMs: 30_000,
        });
      } catch {
        // already gone
      }
    }
    rmSync(projectDir, { recursive: true, force: true });
  });

  it("creates the cluster UTF8 and runs the migrations: gsindex answers", async () => {
    await waitFor(
      "the API to be ready (or the start to fail)",
      async () => {
        if (child.exitCode !== null) return true;
        try {
          return (await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status === 200;
        } catch {
          return false; // not listening yet
        }
      },
      { timeoutMs: 180_000, intervalMs: 500, describe: () => output.slice(-3000) },
    );
    expect(child.exitCode).toBeNull();
    const client = new Client({ connectionString: databaseUrl("gsindex") });
    await client.connect();
    try {
      const encoding = await client.query<{ server_encoding: string }>("show server_encoding");
      expect(encoding.rows[0]?.server_encoding).toBe("UTF8");
      const migrated = await client.query<{ n: string }>(
        "select count(*) as n from _prisma_migrations where finished_at is not null",
      );
      expect(Number(migrated.rows[0]?.n)).toBeGreaterThan(0);
      // Text the crawler stores (server and player names) in any script, case-folded as the API searches.
      const folded = await client.query<{ lower: string }>("select lower('ÄÖ Ω') as lower");
      expect(folded.rows[0]?.lower).toBe("äö ω");
    } finally {
      await client.end();
    }
  });

  it("on SIGTERM to the process group, gsindex stops cleanly first, then the database; nothing is left running", async () => {
    expect(child.exitCode).toBeNull();
    process.kill(-child.pid!, "SIGTERM");
    const code = await exited;
    const log = output.split("\n");
    // The log's tail in the failure message: what stopped it, when it did not exit 0.
    expect({ code, tail: code === 0 ? [] : log.slice(-15) }).toEqual({ code: 0, tail: [] });
    expect(log.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    // No error or fatal line from gsindex (pino levels 50, 60): a database that went down under its stop
    // shows here as terminated connections (57P01) or refused ones.
    const errors = log.filter((l) => /"level":(50|60)/.test(l));
    expect(errors).toEqual([]);
    expect(output).not.toMatch(/terminating connection|ECONNREFUSED|57P01/);
    expect(existsSync(path.join(dataDir(), "postmaster.pid"))).toBe(false);
    expect(await canQueryPostgres(databaseUrl("postgres"))).toBe(false);
  });
});
