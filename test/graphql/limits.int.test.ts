/**
 * The HTTP edge: depth and complexity limits, the read rate limit (in memory, and shared through Redis
 * by two API processes), internal errors masked and logged with the request id, health routes, CORS
 * and the GraphQL explorer on a browser's GET /graphql.
 */
import { Writable } from "node:stream";
import IORedis from "ioredis";
import pino from "pino";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../src/generated/prisma/client";
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from "../helpers/db";
import { itWithRedis } from "../helpers/queue-backend";
import { auth, createCountingDb, startTestApi, type CountingDb, type TestApi } from "./helpers/api";
import { seedServers } from "./helpers/seed";

let tdb: TestDatabase;
let counting: CountingDb;

beforeAll(async () => {
  tdb = await createTestDatabase("gsindex_gql_limits");
  counting = createCountingDb(tdb.url);
  await seedServers(counting.db, 30);
}, 30_000);

afterAll(async () => {
  await counting?.db.$disconnect();
  await tdb?.drop();
});

async function withApi<T>(
  config: Parameters<typeof startTestApi>[0]["config"],
  fn: (api: TestApi) => Promise<T>,
  extra: Partial<Parameters<typeof startTestApi>[0]> = {},
): Promise<T> {
  const api = await startTestApi({ db: counting.db, config, ...extra });
  try {
    return await fn(api);
  } finally {
    await api.close();
  }
}

describe("depth and complexity", () => {
  it("refuses a query nested deeper than the limit, before running it", async () => {
    await withApi({ apiMaxDepth: 6 }, async (api) => {
      const deep =
        "{ sources { crawls { source { crawls { source { crawls { source { name } } } } } } } }";
      counting.reset();
      const res = await api.gql(deep);
      expect(res.status).toBe(400);
      expect(res.errors?.[0]?.extensions).toMatchObject({
        code: "QUERY_TOO_COMPLEX",
        depth: 8,
        maxDepth: 6,
      });
      expect(counting.statements()).toEqual([]);
      expect(
        (await api.gql("{ sources { crawls { source { crawls { source { name } } } } } }")).errors,
      ).toBeUndefined();
    });
  });

  it("introspection is not limited by depth (Sandbox and codegen keep working)", async () => {
    await withApi({ apiMaxDepth: 3 }, async (api) => {
      const res = await api.gql(
        "{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name } } } } } } } }",
      );
      expect(res.errors).toBeUndefined();
    });
  });

  it("counts page sizes, variables included, against the complexity limit", async () => {
    await withApi({ apiMaxComplexity: 300 }, async (api) => {
      const q = "query($n: Int!) { servers(first: $n) { nodes { id name map players } } }";
      counting.reset();
      const big = await api.gql(q, { n: 100 });
      expect(big.errors?.[0]?.extensions).toMatchObject({
        code: "QUERY_TOO_COMPLEX",
        maxComplexity: 300,
      });
      expect(big.errors?.[0]?.extensions?.["complexity"]).toBeGreaterThan(300);
      expect(counting.statements()).toEqual([]);
      expect((await api.gql(q, { n: 10 })).errors).toBeUndefined();
    });
  });
});

describe("read rate limit", () => {
  it("in memory: RATE_LIMITED with a retry hint (429, Retry-After) after the allowance; mutations are not counted", async () => {
    // The limiter counts in clock-aligned windows: a run that crosses a minute boundary starts a new
    // count mid-test, so such a run is repeated (once is enough: a run takes far less than a minute).
    const windowMs = 60_000;
    const run = () =>
      withApi({ apiRateLimitMax: 3, apiRateLimitWindowMs: windowMs }, async (api) => {
        const window = Math.floor(Date.now() / windowMs);
        const before = [];
        for (let k = 0; k < 3; k++) before.push(await api.gql("{ sources { name } }"));
        await api.gql('mutation { unblockRange(cidr: "198.51.100.0/24") }', {}, auth());
        const res = await api.gql("{ sources { name } }");
        return { before, res, sameWindow: Math.floor(Date.now() / windowMs) === window };
      });
    let outcome = await run();
    if (!outcome.sameWindow) outcome = await run();
    const { before, res } = outcome;
    for (const r of before) expect(r.errors).toBeUndefined();
    expect(res.status).toBe(429);
    expect(res.errors?.[0]?.extensions?.["code"]).toBe("RATE_LIMITED");
    const retry = res.errors?.[0]?.extensions?.["retryAfterSeconds"] as number;
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(res.headers.get("retry-after")).toBe(String(retry));
    expect(res.data).toBeUndefined();
  });

  it("counts per client: the peer address, or the forwarded one behind trusted proxies only", async () => {
    const from = (api: TestApi, ip: string) =>
      api.gql("{ sources { name } }", {}, { "x-forwarded-for": ip });
    await withApi({ apiRateLimitMax: 1, apiTrustProxyHops: 1 }, async (api) => {
      expect((await from(api, "198.51.100.1")).errors).toBeUndefined();
      expect((await from(api, "198.51.100.2")).errors).toBeUndefined();
      expect((await from(api, "198.51.100.1")).errors?.[0]?.extensions?.["code"]).toBe(
        "RATE_LIMITED",
      );
    });
    await withApi({ apiRateLimitMax: 1 }, async (api) => {
      expect((await from(api, "198.51.100.1")).errors).toBeUndefined();
      expect((await from(api, "198.51.100.2")).errors?.[0]?.extensions?.["code"]).toBe(
        "RATE_LIMITED",
      );
    });
  });

  // Without Redis, rate-limit-postgres.int.test.ts shares the count through PostgreSQL.
  itWithRedis("with Redis: two API processes share one count", async (redisUrl) => {
    const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
    const prefix = `gsindex-test-rl-${process.pid}-${Date.now().toString(36)}`;
    const a = await startTestApi({
      db: counting.db,
      redis,
      config: { apiRateLimitMax: 4, queuePrefix: prefix },
    });
    const b = await startTestApi({
      db: counting.db,
      redis,
      config: { apiRateLimitMax: 4, queuePrefix: prefix },
    });
    try {
      for (const api of [a, b, a, b])
        expect((await api.gql("{ sources { name } }")).errors).toBeUndefined();
      expect((await b.gql("{ sources { name } }")).errors?.[0]?.extensions?.["code"]).toBe(
        "RATE_LIMITED",
      );
      expect((await a.gql("{ sources { name } }")).errors?.[0]?.extensions?.["code"]).toBe(
        "RATE_LIMITED",
      );
      const keys = await redis.keys(`${prefix}:api-ratelimit:*`);
      expect(keys).toHaveLength(1);
      expect(await redis.pttl(keys[0] as string)).toBeGreaterThan(0);
    } finally {
      await a.close();
      await b.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });
});

describe("internal errors", () => {
  it("are masked to the client and logged with the request id", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ level: "info" }, sink);
    await withApi(
      {},
      async (api) => {
        await counting.db.$executeRawUnsafe("ALTER TABLE crawl_run RENAME TO crawl_run_away");
        try {
          const res = await api.gql<{ sources: unknown[] }>(
            "{ sources { name crawls { runs { region } } } }",
          );
          const err = res.errors?.[0];
          expect(err?.extensions?.["code"]).toBe("INTERNAL_SERVER_ERROR");
          const requestId = err?.extensions?.["requestId"] as string;
          expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
          expect(res.headers.get("x-request-id")).toBe(requestId);
          expect(err?.message).toBe(`internal server error (request id ${requestId})`);
          expect(JSON.stringify(res.errors)).not.toMatch(/crawl_run|prisma|stack/i);
          const logged = lines
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((l) => l["requestId"] === requestId && l["level"] === 50);
          expect(logged?.["msg"]).toBe("internal error in a GraphQL request");
          expect(JSON.stringify(logged)).toMatch(/crawl_run/);
        } finally {
          await counting.db.$executeRawUnsafe("ALTER TABLE crawl_run_away RENAME TO crawl_run");
        }
      },
      { logger },
    );
  });

  it("client mistakes are shown as they are", async () => {
    await withApi({}, async (api) => {
      const unknownField = await api.gql("{ servers { nodes { nope } } }");
      expect(unknownField.errors?.[0]?.extensions?.["code"]).toBe("GRAPHQL_VALIDATION_FAILED");
      const badVariable = await api.gql("query($n: Int) { servers(first: $n) { nodes { id } } }", {
        n: "ten",
      });
      expect(badVariable.errors?.[0]?.extensions).toMatchObject({
        code: "BAD_USER_INPUT",
        argumentName: "$n",
      });
      const syntax = await api.gql("{ servers { ");
      expect(syntax.errors?.[0]?.extensions?.["code"]).toBe("GRAPHQL_PARSE_FAILED");
    });
  });
});

describe("HTTP routes", () => {
  it("/healthz and /readyz", async () => {
    await withApi({}, async (api) => {
      const health = await fetch(`${api.baseUrl}/healthz`);
      expect(health.status).toBe(200);
      const ready = await fetch(`${api.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: "ready",
        database: true,
        failed: [],
        reasons: {},
      });
    });
    const u = new URL(TEST_SERVER_URL);
    u.pathname = "/gsindex_no_such_database";
    const broken = new PrismaClient({
      adapter: new PrismaPg({ connectionString: u.toString(), max: 1 }),
    });
    const api = await startTestApi({ db: broken });
    try {
      const ready = await fetch(`${api.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({
        status: "not ready",
        database: false,
        failed: ["database"],
      });
      expect((await fetch(`${api.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await api.close();
      await broken.$disconnect();
    }
  });

  it("CORS: configured origins only", async () => {
    await withApi({ apiCorsOrigins: ["https://stats.example"] }, async (api) => {
      const pre = (origin: string) =>
        fetch(api.api.url, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,authorization",
          },
        });
      const ok = await pre("https://stats.example");
      expect(ok.headers.get("access-control-allow-origin")).toBe("https://stats.example");
      const other = await pre("https://evil.example");
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    });
  });

  it("a browser on GET /graphql gets the local GraphiQL (no CDN-loaded Sandbox), in production too", async () => {
    for (const production of [false, true]) {
      await withApi({ production }, async (api) => {
        const res = await fetch(api.api.url, { headers: { accept: "text/html" } });
        expect(res.status).toBe(200);
        const html = await res.text();
        expect(html).toContain("/web/graphiql/graphiql.js");
        expect(html).not.toMatch(/EmbeddedSandbox|https?:\/\//);
      });
    }
  });

  it("observes request latency per operation when given a histogram", async () => {
    const seen: string[] = [];
    await withApi(
      {},
      async (api) => {
        await api.gql("{ sources { name } }");
        await api.gql("query Named { games { appId } }");
        await api.gql("{ nope }");
      },
      {
        apiLatency: {
          observe: (labels, seconds) => void (seconds >= 0 && seen.push(labels.operation)),
        },
      },
    );
    expect(seen).toEqual(["query:sources", "query:games", "invalid"]);
  });

  it("mounts extra routes (metrics, dashboards) through the hook", async () => {
    await withApi(
      {},
      async (api) => {
        expect(await (await fetch(`${api.baseUrl}/metrics`)).text()).toBe("metrics here");
      },
      {
        mountRoutes: (app) =>
          void app.get("/metrics", (_req, res) => void res.type("text/plain").send("metrics here")),
      },
    );
  });
});
