import { startService } from "../../src/service/service";
import { freePort } from "../../src/shared/free-port";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { testQueueEnv, testRedisUrl } from "../helpers/queue-backend";
import { dropRedisPrefix } from "../helpers/redis";
import { waitFor } from "../helpers/wait-for";

const QUEUE_PREFIX = `observability-${process.pid}`;

describe("operator routes of gsindex serve", () => {
  let database: TestDatabase;
  let service: { stop(): Promise<void> };
  let base: string;

  beforeAll(async () => {
    database = await createTestDatabase("gsindex_observability");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = loadConfig({
      DATABASE_URL: database.url,
      ...testQueueEnv(),
      GSINDEX_QUEUE_PREFIX: QUEUE_PREFIX,
      API_HOST: "127.0.0.1",
      API_PORT: String(port),
      GSINDEX_API_KEYS: "operator-key",
      MIGRATE_ON_START: "0",
      LOG_LEVEL: "silent",
    });
    service = await startService(config, ["api"], silentLogger);
  }, 30_000);

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    await dropRedisPrefix(QUEUE_PREFIX);
  });

  it("answers health and readiness", async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    // Each dependency gets 1 s to answer; on a loaded machine the first answers may come later.
    const readiness = await waitFor(
      "/readyz to answer 200",
      async () => {
        const answer = await fetch(`${base}/readyz`);
        return answer.status === 200 ? answer : null;
      },
      { timeoutMs: 10_000, intervalMs: 500 },
    );
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toMatchObject({
      status: "ready",
      database: true,
      // On PostgreSQL the queue store is the database check.
      ...(testRedisUrl === null ? {} : { redis: true }),
      failed: [],
    });
  });

  it("serves Prometheus metrics: queue depths and API latency", async () => {
    await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ sources { id } }" }),
    });
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/plain/);
    const text = await response.text();
    expect(text).toMatch(/^gsindex_queue_jobs\{queue="crawl",state="waiting"\} \d+$/m);
    expect(text).toMatch(/^gsindex_api_request_duration_seconds_count\{.*\} [1-9]\d*$/m);
    expect(text).toContain("# TYPE gsindex_query_outcomes_total counter");
  });

  it("keeps the queue dashboard behind the API key", async () => {
    expect((await fetch(`${base}/admin/queues`)).status).toBe(401);
    expect(
      (await fetch(`${base}/admin/queues`, { headers: { authorization: "Bearer wrong" } })).status,
    ).toBe(401);
    const ok = await fetch(`${base}/admin/queues`, {
      headers: { authorization: "Bearer operator-key" },
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/<html/i);
    // A browser answers the Basic prompt with the key as password; its asset requests carry it too.
    const basic = `Basic ${Buffer.from("admin:operator-key").toString("base64")}`;
    expect(
      (await fetch(`${base}/admin/queues`, { headers: { authorization: basic } })).status,
    ).toBe(200);
    const wrongBasic = `Basic ${Buffer.from("admin:nope").toString("base64")}`;
    const refused = await fetch(`${base}/admin/queues`, { headers: { authorization: wrongBasic } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Basic/);
  });
});
