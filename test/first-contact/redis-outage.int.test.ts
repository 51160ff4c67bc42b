/**
 * Redis taken away from a running `gsindex serve` (API, scheduler and workers): /readyz answers 503
 * naming Redis instead of hanging, and the log stays JSON with one line when Redis goes and one when it
 * is back, however many connections retry meanwhile. Runs against a redis-server of its own.
 */
import { freePort } from "../../src/shared/free-port";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { describeWithRedisServer } from "../helpers/queue-backend";
import { startOwnRedis, type OwnRedis } from "../../src/shared/own-services";
import { startServeChild, type ServeChild } from "../helpers/serve-child";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(120_000);

interface Readiness {
  status: number;
  elapsedMs: number;
  body: { status?: string; redis?: boolean; database?: boolean; failed?: string[] };
}

async function readyz(base: string): Promise<Readiness> {
  const started = Date.now();
  try {
    const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(15_000) });
    return {
      status: response.status,
      elapsedMs: Date.now() - started,
      body: (await response.json()) as Readiness["body"],
    };
  } catch {
    return { status: 0, elapsedMs: Date.now() - started, body: {} };
  }
}

describeWithRedisServer("gsindex serve while Redis is stopped or down", () => {
  let database: TestDatabase;
  let redis: OwnRedis;
  let serve: ServeChild;
  let base: string;

  beforeAll(async () => {
    database = await createTestDatabase("gsindex_redis_outage");
    redis = await startOwnRedis();
    const apiPort = await freePort();
    base = `http://127.0.0.1:${apiPort}`;
    serve = startServeChild(["api", "scheduler", "worker"], {
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      API_HOST: "127.0.0.1",
      API_PORT: String(apiPort),
      MIGRATE_ON_START: "0",
      MASTER_SOURCES: "[]",
      STOP_GRACE_MS: "1000",
    });
    await waitFor(
      "gsindex serve to become ready",
      async () => (await readyz(base)).status === 200,
      { timeoutMs: 60_000, intervalMs: 500, describe: () => serve.lines.slice(-20).join("\n") },
    );
  });

  afterAll(async () => {
    redis?.resume();
    await serve?.kill();
    await redis?.destroy();
    await database?.drop();
  });

  it("answers /readyz 503 naming Redis within a couple of seconds while Redis is SIGSTOPped", async () => {
    redis.pause();
    try {
      const answer = await readyz(base);
      expect(answer.status).toBe(503);
      expect(answer.body.redis).toBe(false);
      expect(answer.body.database).toBe(true);
      expect(answer.body.failed).toEqual(["redis"]);
      // Generous for a loaded machine: the point is not hanging for the 20 s seen before.
      expect(answer.elapsedMs).toBeLessThan(5000);
    } finally {
      redis.resume();
    }
    await waitFor("/readyz 200 again", async () => (await readyz(base)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
  });

  it("logs only JSON, one line when Redis goes down and one when it is back", async () => {
    const from = serve.lines.length;
    await redis.kill();
    // Long enough for every connection to retry several times.
    await new Promise((r) => setTimeout(r, 4000));
    const down = await readyz(base);
    expect(down.status).toBe(503);
    expect(down.elapsedMs).toBeLessThan(5000);
    await redis.restart();
    await waitFor("/readyz 200 again", async () => (await readyz(base)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    await new Promise((r) => setTimeout(r, 2000));

    const lines = serve.lines.slice(from).filter((l) => l.trim() !== "");
    const notJson = lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    const entries = lines.map((l) => JSON.parse(l) as { msg?: string; level?: number });
    expect(entries.filter((e) => e.msg === "Redis unreachable")).toHaveLength(1);
    expect(entries.filter((e) => e.msg === "Redis reachable again")).toHaveLength(1);
  });
});
