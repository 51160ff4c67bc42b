/**
 * The start path on a machine with no Redis at all: `scripts/start.sh` (what `npm start` runs) with
 * GSINDEX_SKIP_LOCAL_SERVICES=1 and a PATH without redis-server, against a database of the shared
 * PostgreSQL. The queues go to PostgreSQL (QUEUE_BACKEND=auto), the API answers, and the crawl of a
 * simulated fleet lands in the index.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../../src/shared/free-port";
import { resolveServices } from "../../src/shared/services";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { startSimValveMaster, type SimValveMaster } from "../../src/simulator/master";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { pathWithoutRedis } from "../helpers/path-without-redis";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, "..", "..");
const COUNT = 300;

describe("npm start on a machine without Redis", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  let master: SimValveMaster;
  let binDir: string;
  let child: ChildProcess | null = null;
  let log = "";

  beforeAll(async () => {
    t = await createTestDatabase("gsindex_bare");
    binDir = pathWithoutRedis(mkdtempSync(path.join(os.tmpdir(), "gsindex-no-redis-")));
    fleet = await startFleet(
      makeFleet({
        count: COUNT,
        seed: 7,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0 },
      }),
    );
    master = await startSimValveMaster({ fleet: fleet.specs, rateLimit: false });
  });

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await master?.close();
    await fleet?.stop();
    await t?.drop();
    if (binDir) rmSync(binDir, { recursive: true, force: true });
  });

  it("has no redis-server on its PATH, so QUEUE_BACKEND=redis would stop with a message saying so", async () => {
    const env = {
      PATH: binDir,
      DATABASE_URL: t.url,
      GSINDEX_SKIP_LOCAL_SERVICES: "1",
      QUEUE_BACKEND: "redis",
      GSINDEX_EMBEDDED_REDIS_PORT: String(await freePort()),
    };
    await expect(
      resolveServices({ env, projectDir: os.tmpdir(), log: { info: () => undefined } }),
    ).rejects.toMatchObject({
      variable: "REDIS_URL",
      message: expect.stringContaining("no redis-server on the PATH"),
    });
  });

  it("starts with the queues on PostgreSQL, answers on the API and indexes the crawled fleet", async () => {
    const apiPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: binDir,
      HOME: process.env.HOME,
      DATABASE_URL: t.url,
      GSINDEX_SKIP_LOCAL_SERVICES: "1",
      GSINDEX_QUEUE_PREFIX: `gsindex-bare-${process.pid}`,
      API_HOST: "127.0.0.1",
      API_PORT: String(apiPort),
      MANAGEMENT_HOST: "127.0.0.1",
      MANAGEMENT_PORT: String(await freePort()),
      MASTER_SOURCES: JSON.stringify([
        {
          name: "sim-master",
          kind: "VALVE_UDP",
          host: master.address.host,
          port: master.address.port,
          intervalMs: 3_600_000,
          options: { requestsPerMinute: 0 },
        },
      ]),
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      // The whole fleet listens on 127.0.0.1: by the farm rule's count (more than 200 ports on one IP) a farm.
      FARM_RULE_EXEMPT_RANGES: "127.0.0.1",
      // The fleet answers from this jest process, slow on a loaded machine.
      QUERY_TIMEOUT_MS: "6000",
      LOG_LEVEL: "info",
    };
    child = spawn("bash", [path.join(ROOT, "scripts", "start.sh")], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (log += d.toString()));

    const graphql = async (query: string): Promise<{ data?: Record<string, unknown> } | null> => {
      try {
        const res = await fetch(`http://127.0.0.1:${apiPort}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query }),
        });
        return (await res.json()) as { data?: Record<string, unknown> };
      } catch {
        return null; // not listening yet
      }
    };
    const indexed = async (): Promise<number> => {
      const answer = await graphql("{ servers(first: 1) { totalCount } }");
      return (answer?.data?.servers as { totalCount?: number } | undefined)?.totalCount ?? -1;
    };
    await waitFor(
      "the API to answer (or gsindex to exit)",
      async () => (await indexed()) >= 0 || child?.exitCode !== null,
      { timeoutMs: 120_000, intervalMs: 500, describe: () => log.slice(-2000) },
    );
    expect(child.exitCode).toBeNull();
    expect(log).toContain("queues: PostgreSQL (no REDIS_URL and no Redis on 127.0.0.1:6379");

    await waitFor(
      "the crawl of the fleet to land",
      async () =>
        (await t.db.crawl.count({ where: { finishedAt: { not: null }, written: COUNT } })) === 1,
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => log.slice(-2000) },
    );
    expect(await indexed()).toBe(COUNT);
    const readyz = await fetch(`http://127.0.0.1:${apiPort}/readyz`);
    expect(readyz.status).toBe(200);

    const exited = new Promise((resolve) => child!.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    expect(log).not.toContain("Redis unreachable");
  });
});
