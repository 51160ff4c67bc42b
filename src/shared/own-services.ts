/**
 * A PostgreSQL and a redis-server of a fault test's or the chaos bench's own, on spare loopback ports with
 * their files in a temporary folder: the faults stop, pause and kill these, never the machine's shared
 * servers. PostgreSQL comes from the distribution's binaries (/usr/lib/postgresql/<version>/bin, or PG_BIN,
 * else the embedded PostgreSQL's) and runs as the postgres user when we are root (it refuses root);
 * redis-server comes from the PATH.
 * Not used by the service itself; here beside services.ts so the tests and bench/ share one copy.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { embeddedPostgresBinDir } from "./embedded-postgres-bin";
import { freePort } from "./free-port";
import { canPingRedis, canQueryPostgres } from "./services";

const START_POLLS = 150;
const POLL_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => child.once("exit", () => r()));
}

export interface OwnPostgres {
  port: number;
  /** Server URL (database `postgres`). */
  url: string;
  start(): Promise<void>;
  /** Fast shutdown: sessions are terminated (57P01), the data stays. */
  stop(): Promise<void>;
  /** Stops it if running and deletes its data. */
  destroy(): Promise<void>;
}

function postgresBinDir(): string | null {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions[0] ? path.join(root, versions[0], "bin") : embeddedBinDirOrNull();
}

/** Without a distribution's PostgreSQL, the embedded one's, so the fault tests run on a bare machine. */
function embeddedBinDirOrNull(): string | null {
  try {
    return embeddedPostgresBinDir();
  } catch {
    return null;
  }
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinDir();
  if (bin === null)
    throw new Error(
      "no PostgreSQL binaries under /usr/lib/postgresql/<version>/bin nor the embedded PostgreSQL's (apt-get install postgresql, or set PG_BIN)",
    );
  const root = mkdtempSync(path.join(tmpdir(), "gsindex-own-pg-"));
  chmodSync(root, 0o755);
  const data = path.join(root, "data");
  let ids: { uid: number; gid: number } | undefined;
  if (userInfo().uid === 0) {
    const id = (flag: string) =>
      Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
    ids = { uid: id("-u"), gid: id("-g") };
    chownSync(root, ids.uid, ids.gid);
  }
  const init = spawnSync(
    path.join(bin, "initdb"),
    ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"],
    { ...(ids ?? {}), encoding: "utf8" },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | null = null;

  const own: OwnPostgres = {
    port,
    url,
    async start() {
      if (child) return;
      // 200 connections: the chaos bench runs scheduler, worker and API processes, each with its own pool.
      const args = [
        "-D",
        data,
        "-p",
        String(port),
        "-k",
        root,
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "fsync=off",
        "-c",
        "max_connections=200",
      ];
      const c = spawn(path.join(bin, "postgres"), args, { ...(ids ?? {}), stdio: "ignore" });
      child = c;
      for (let i = 0; i < START_POLLS && !(await canQueryPostgres(url)); i++) {
        if (c.exitCode !== null) throw new Error(`postgres exited with ${c.exitCode}`);
        await sleep(POLL_MS);
      }
    },
    async stop() {
      const c = child;
      if (!c) return;
      child = null;
      const done = exited(c);
      c.kill("SIGINT");
      await done;
    },
    async destroy() {
      await own.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
  await own.start();
  return own;
}

export interface OwnRedis {
  port: number;
  url: string;
  /** SIGSTOP / SIGCONT: the server keeps its sockets but answers nothing. */
  pause(): void;
  resume(): void;
  /** SIGKILL; restart() brings up a new, empty one on the same port. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  destroy(): Promise<void>;
}

async function launchRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  for (let i = 0; i < START_POLLS; i++) {
    if (await canPingRedis("127.0.0.1", port)) return child;
    if (child.exitCode !== null) break;
    await sleep(POLL_MS);
  }
  child.kill("SIGKILL");
  throw new Error(`redis-server did not start on 127.0.0.1:${port}`);
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child = await launchRedis(port);
  const kill = async (): Promise<void> => {
    const done = exited(child);
    child.kill("SIGCONT");
    child.kill("SIGKILL");
    await done;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: () => void child.kill("SIGSTOP"),
    resume: () => void child.kill("SIGCONT"),
    kill,
    async restart() {
      child = await launchRedis(port);
    },
    destroy: kill,
  };
}
