/**
 * One hostile, anonymous API client (issue 12, items 8-12), over real HTTP on loopback against the real
 * API and a real test database: it is refused before its query is parsed once it is rate limited, its
 * oversized documents stop at parse time, it pays for what its reads cost, it cannot guess keys without
 * limit, its bad text is its own mistake (not an internal error in the log), and no error it provokes
 * shows a stack or a path. Every loop is bounded; nothing here asserts a duration.
 */
import http from "node:http";
import { Writable } from "node:stream";
import pino from "pino";
import { PrismaPg } from "@prisma/adapter-pg";
import type { ApiConfig } from "../../src/graphql/api-config";
import { openQueue } from "../../src/crawler/queues";
import { createApiKeyChecker } from "../../src/graphql/auth";
import { mountOperatorRoutes } from "../../src/graphql/dashboard";
import { startApi, type ApiDeps, type RunningApi } from "../../src/graphql/server";
import { PrismaClient } from "../../src/generated/prisma/client";
import { ConfigError, loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from "../helpers/db";
import { testQueueStore } from "../helpers/queue-backend";
import { dropRedisPrefix } from "../helpers/redis";
import {
  createCountingDb,
  TEST_API_KEY,
  testApiConfig,
  type CountingDb,
} from "../graphql/helpers/api";
import { seedServers } from "../graphql/helpers/seed";

// Some cases send 50 MB bodies over loopback: generous on a loaded machine, no duration is asserted.
jest.setTimeout(60_000);

let tdb: TestDatabase;
let counting: CountingDb;

beforeAll(async () => {
  tdb = await createTestDatabase("gsindex_api_abuse");
  counting = createCountingDb(tdb.url);
  await seedServers(counting.db, 20);
}, 30_000);

afterAll(async () => {
  await counting?.db.$disconnect();
  await tdb?.drop();
});

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One HTTP request with node:http (a 50 MB body the server refuses early must not fail the client). */
function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? "POST", headers: opts.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error("no answer in 30 s")));
    // The server may answer and stop reading before the whole body is sent: that is not a failure here.
    req.on("error", (err: NodeJS.ErrnoException) =>
      err.code === "EPIPE" || err.code === "ECONNRESET" ? undefined : reject(err),
    );
    req.end(opts.body);
  });
}

const json = { "content-type": "application/json" };
const body = (query: string, variables: Record<string, unknown> = {}): string =>
  JSON.stringify({ query, variables });

interface GqlError {
  message: string;
  extensions?: Record<string, unknown>;
}
function errorsOf(reply: Reply): GqlError[] {
  const parsed = JSON.parse(reply.text) as { errors?: GqlError[] };
  return parsed.errors ?? [];
}
const codeOf = (reply: Reply): unknown => errorsOf(reply)[0]?.extensions?.["code"];

interface Started {
  api: RunningApi;
  base: string;
  /** Operations Apollo reached (the latency hook): a request refused in front of Apollo is not here. */
  reachedApollo: string[];
}

async function withApi<T>(
  config: Partial<ApiConfig>,
  fn: (s: Started) => Promise<T>,
  extra: Partial<ApiDeps> = {},
): Promise<T> {
  const reachedApollo: string[] = [];
  const api = await startApi({
    prisma: counting.db,
    config: testApiConfig(config),
    logger: silentLogger,
    apiLatency: { observe: (labels) => void reachedApollo.push(labels.operation) },
    ...extra,
  });
  try {
    return await fn({ api, base: api.url.replace(/\/graphql$/, ""), reachedApollo });
  } finally {
    await api.close();
  }
}

/** The issue's hostile document: 11,000 selections (aliased, so validation keeps every one). */
const HOSTILE = `{ sources { ${Array.from({ length: 11_000 }, (_, i) => `f${i}: name`).join(" ")} } }`;

function expectNoInternals(reply: Reply): void {
  expect(reply.headers["content-type"]).toMatch(/^application\/(graphql-response\+)?json/);
  expect(reply.text).not.toMatch(/<html|<pre|\bat [\w.<>]+ \(|node_modules|\/work\/|stack/i);
  expect(reply.text).not.toContain(process.cwd());
  expect(errorsOf(reply).length).toBeGreaterThan(0);
}

describe("12.8 a limited client is refused before its query is parsed; documents are capped at parse time", () => {
  it("8 oversized queries (and a body that is not even JSON) from a rate-limited client: 429 without reaching the parser; /healthz answers meanwhile", async () => {
    await withApi(
      { apiRateLimitMax: 2, apiMaxBodyBytes: 1024 * 1024 },
      async ({ api, base, reachedApollo }) => {
        for (let k = 0; k < 2; k++)
          expect(
            (await request(api.url, { headers: json, body: body("{ sources { name } }") })).status,
          ).toBe(200);
        expect(reachedApollo).toEqual(["query:sources", "query:sources"]);

        const hostile = Array.from({ length: 8 }, () =>
          request(api.url, { headers: json, body: body(HOSTILE) }),
        );
        const notJson = request(api.url, {
          headers: json,
          body: '{"query": "{ sources { name } }", oops',
        });
        const health = request(`${base}/healthz`, { method: "GET" });
        const replies = await Promise.all([...hostile, notJson]);
        expect((await health).status).toBe(200);
        for (const reply of replies) {
          expect(reply.status).toBe(429);
          expect(codeOf(reply)).toBe("RATE_LIMITED");
          expect(Number(reply.headers["retry-after"])).toBeGreaterThanOrEqual(1);
          expectNoInternals(reply);
        }
        // Not one of them reached Apollo (which parses first): the refusal came before any parsing. A body
        // that is not JSON got 429, not 400: not even the JSON was read.
        expect(reachedApollo).toEqual(["query:sources", "query:sources"]);
      },
    );
  });

  it("a document over API_MAX_TOKENS is refused at parse time (QUERY_TOO_COMPLEX, 400), before validation and without SQL", async () => {
    await withApi(
      { apiMaxTokens: 2000, apiMaxBodyBytes: 1024 * 1024 },
      async ({ api, reachedApollo }) => {
        counting.reset();
        const reply = await request(api.url, { headers: json, body: body(HOSTILE) });
        expect(reply.status).toBe(400);
        expect(errorsOf(reply)[0]?.extensions).toMatchObject({
          code: "QUERY_TOO_COMPLEX",
          maxTokens: 2000,
        });
        expectNoInternals(reply);
        expect(reachedApollo).toEqual([]);
        expect(counting.statements()).toEqual([]);
        // The Sandbox's introspection query is far below the cap.
        const { getIntrospectionQuery } = await import("graphql");
        expect(
          (await request(api.url, { headers: json, body: body(getIntrospectionQuery()) })).status,
        ).toBe(200);
      },
    );
  });

  it("aliases and fields are capped (API_MAX_ALIASES, API_MAX_FIELDS): 1,000 aliases of a cheap field run no SQL", async () => {
    await withApi(
      { apiMaxTokens: 100_000, apiMaxAliases: 30, apiMaxFields: 200 },
      async ({ api }) => {
        counting.reset();
        const aliases = await request(api.url, {
          headers: json,
          body: body(
            `{ ${Array.from({ length: 1000 }, (_, i) => `a${i}: sources { name }`).join(" ")} }`,
          ),
        });
        expect(aliases.status).toBe(400);
        expect(errorsOf(aliases)[0]?.extensions).toMatchObject({
          code: "QUERY_TOO_COMPLEX",
          aliases: 1000,
          maxAliases: 30,
        });
        const fields = await request(api.url, {
          headers: json,
          body: body(`{ sources { ${"name ".repeat(300)} } }`),
        });
        expect(fields.status).toBe(400);
        expect(errorsOf(fields)[0]?.extensions).toMatchObject({
          code: "QUERY_TOO_COMPLEX",
          fields: 301,
          maxFields: 200,
        });
        expect(counting.statements()).toEqual([]);
        // At the caps, a query runs.
        const ok = await request(api.url, {
          headers: json,
          body: body(
            `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: sources { name }`).join(" ")} }`,
          ),
        });
        expect(ok.status).toBe(200);
        expect(errorsOf(ok)).toEqual([]);
      },
    );
  });

  it("the same caps hold for a query sent with GET", async () => {
    await withApi({ apiMaxTokens: 100 }, async ({ api }) => {
      const url = `${api.url}?query=${encodeURIComponent(`{ sources { ${"name ".repeat(150)} } }`)}`;
      const reply = await request(url, {
        method: "GET",
        headers: { "apollo-require-preflight": "1" },
      });
      expect(reply.status).toBe(400);
      expect(codeOf(reply)).toBe("QUERY_TOO_COMPLEX");
    });
  });

  it("a body over API_MAX_BODY_BYTES: 413 with a GraphQL error, refused on its Content-Length and never buffered", async () => {
    await withApi({ apiMaxBodyBytes: 65_536 }, async ({ api, reachedApollo }) => {
      const reply = await request(api.url, {
        headers: json,
        body: Buffer.alloc(50 * 1024 * 1024, 0x20),
      });
      expect(reply.status).toBe(413);
      expect(errorsOf(reply)[0]?.extensions).toMatchObject({
        code: "PAYLOAD_TOO_LARGE",
        maxBodyBytes: 65_536,
      });
      expectNoInternals(reply);
      expect(reachedApollo).toEqual([]);
    });
  });
});

describe("12.9 the read rate limit charges what a read costs", () => {
  it("a read costs one unit per API_RATE_LIMIT_COMPLEXITY_PER_READ of complexity; X-RateLimit headers say what is left", async () => {
    await withApi({ apiRateLimitMax: 10, apiRateLimitComplexityPerRead: 100 }, async ({ api }) => {
      const page = body("{ servers(first: 100) { nodes { id name map players } } }"); // complexity 501: 6 units
      const first = await request(api.url, { headers: json, body: page });
      expect(first.status).toBe(200);
      expect(first.headers["x-ratelimit-limit"]).toBe("10");
      expect(first.headers["x-ratelimit-remaining"]).toBe("4");
      expect(Number(first.headers["x-ratelimit-reset"])).toBeGreaterThanOrEqual(1);
      const second = await request(api.url, { headers: json, body: page });
      expect(second.status).toBe(429);
      expect(codeOf(second)).toBe("RATE_LIMITED");
      expect(second.headers["x-ratelimit-remaining"]).toBe("0");
      expect(Number(second.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    });
  });

  it("cheap reads still cost one each", async () => {
    await withApi({ apiRateLimitMax: 3, apiRateLimitComplexityPerRead: 100 }, async ({ api }) => {
      const statuses: number[] = [];
      for (let k = 0; k < 5; k++)
        statuses.push(
          (await request(api.url, { headers: json, body: body("{ sources { name } }") })).status,
        );
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    });
  });
});

describe("12.10 failed authentication is rate limited per client", () => {
  const mutation = body('mutation { unblockRange(cidr: "198.51.100.0/24") }');
  const from = (ip: string, key: string): Record<string, string> => ({
    ...json,
    "x-forwarded-for": ip,
    authorization: `Bearer ${key}`,
  });

  it("after API_AUTH_FAILURE_LIMIT wrong keys: 429 with Retry-After, the right key too, from that client only", async () => {
    await withApi(
      { apiAuthFailureLimit: 5, apiAuthFailureWindowMs: 60_000, apiTrustProxyHops: 1 },
      async ({ api }) => {
        const statuses: number[] = [];
        for (let k = 0; k < 20; k++)
          statuses.push(
            (
              await request(api.url, {
                headers: from("198.51.100.7", `guess-${k}`),
                body: mutation,
              })
            ).status,
          );
        expect(statuses).toEqual([...Array<number>(5).fill(401), ...Array<number>(15).fill(429)]);
        const locked = await request(api.url, {
          headers: from("198.51.100.7", TEST_API_KEY),
          body: mutation,
        });
        expect(locked.status).toBe(429); // no oracle: the right key is refused too while locked out
        expect(codeOf(locked)).toBe("RATE_LIMITED");
        expect(Number(locked.headers["retry-after"])).toBeGreaterThanOrEqual(1);
        expect(Number(locked.headers["retry-after"])).toBeLessThanOrEqual(60);
        expectNoInternals(locked);
        const other = await request(api.url, {
          headers: from("198.51.100.8", TEST_API_KEY),
          body: mutation,
        });
        expect(other.status).toBe(200);
        expect(errorsOf(other)).toEqual([]);
      },
    );
  });

  it("guesses sent in parallel are counted as they arrive: no more than the limit get an answer", async () => {
    await withApi({ apiAuthFailureLimit: 5, apiTrustProxyHops: 1 }, async ({ api }) => {
      const replies = await Promise.all(
        Array.from({ length: 30 }, (_, k) =>
          request(api.url, { headers: from("198.51.100.9", `guess-${k}`), body: mutation }),
        ),
      );
      const statuses = replies.map((r) => r.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(25);
    });
  });

  it("the queue dashboard (/admin/queues, Basic or Bearer) shares the same count", async () => {
    const prefix = `gsindex-test-abuse-${process.pid}-${Date.now().toString(36)}`;
    const { queue, redis } = openQueue("abuse", testQueueStore(tdb.url), prefix, {});
    const checkApiKey = createApiKeyChecker([TEST_API_KEY]);
    try {
      await withApi(
        { apiAuthFailureLimit: 3, apiTrustProxyHops: 1 },
        async ({ base }) => {
          const basic = (ip: string, password: string) => ({
            "x-forwarded-for": ip,
            authorization: `Basic ${Buffer.from(`admin:${password}`).toString("base64")}`,
          });
          const statuses: number[] = [];
          for (let k = 0; k < 6; k++)
            statuses.push(
              (
                await request(`${base}/admin/queues`, {
                  method: "GET",
                  headers: basic("198.51.100.10", `guess-${k}`),
                })
              ).status,
            );
          expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
          const locked = await request(`${base}/admin/queues`, {
            method: "GET",
            headers: basic("198.51.100.10", TEST_API_KEY),
          });
          expect(locked.status).toBe(429);
          expect(Number(locked.headers["retry-after"])).toBeGreaterThanOrEqual(1);
          expect(
            (
              await request(`${base}/admin/queues`, {
                method: "GET",
                headers: basic("198.51.100.11", TEST_API_KEY),
              })
            ).status,
          ).toBe(200);
          // Without credentials the browser is asked for them; asking is not a failure.
          for (let k = 0; k < 5; k++)
            expect(
              (
                await request(`${base}/admin/queues`, {
                  method: "GET",
                  headers: { "x-forwarded-for": "198.51.100.12" },
                })
              ).status,
            ).toBe(401);
          expect(
            (
              await request(`${base}/admin/queues`, {
                method: "GET",
                headers: basic("198.51.100.12", TEST_API_KEY),
              })
            ).status,
          ).toBe(200);
        },
        {
          mountRoutes: (app) =>
            mountOperatorRoutes(app, {
              queues: [queue],
              isAuthorized: (a) => checkApiKey(a) === "valid",
            }),
        },
      );
    } finally {
      await queue.close();
      await redis?.quit().catch(() => undefined);
      await dropRedisPrefix(prefix);
    }
  });
});

describe("12.11 bad text in any argument is BAD_USER_INPUT, never an internal error in the log", () => {
  const FILTERS = ["search", "map", "folder", "playerName"] as const;

  it("a NUL byte or a lone surrogate in a text filter, as a variable or a literal", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    await withApi(
      {},
      async ({ api }) => {
        const cases: Array<[string, Record<string, unknown>, RegExp]> = [];
        for (const name of FILTERS) {
          cases.push([
            `query($f: ServerFilterInput) { servers(filter: $f) { nodes { id } } }`,
            { f: { [name]: "a\u0000b" } },
            new RegExp(`\\$f\\.${name}`),
          ]);
          cases.push([
            `query { servers(filter: { ${name}: "a\\u0000b" }) { nodes { id } } }`,
            {},
            new RegExp(`^filter\\.${name}$`),
          ]);
          cases.push([
            `query($f: ServerFilterInput) { servers(filter: $f) { nodes { id } } }`,
            { f: { [name]: "a\ud800b" } },
            new RegExp(`\\$f\\.${name}`),
          ]);
        }
        for (const tags of ["tagsAll", "tagsAny"]) {
          cases.push([
            `query($f: ServerFilterInput) { servers(filter: $f) { nodes { id } } }`,
            { f: { [tags]: ["ok", "x\u0000"] } },
            new RegExp(`\\$f\\.${tags}\\[1\\]`),
          ]);
          cases.push([
            `query { servers(filter: { ${tags}: ["ok", "x\\u0000"] }) { nodes { id } } }`,
            {},
            new RegExp(`^filter\\.${tags}`),
          ]);
        }
        cases.push([
          'query { serverByAddress(address: "127.0.0.1\\u0000", port: 27015) { id } }',
          {},
          /^address$/,
        ]);
        cases.push(["query($m: String) { maps(folder: $m) { map } }", { m: "\u0000" }, /^\$m$/]);
        counting.reset();
        for (const [query, variables, argumentName] of cases) {
          const reply = await request(api.url, { headers: json, body: body(query, variables) });
          const error = errorsOf(reply)[0];
          expect({ query, variables, code: error?.extensions?.["code"] }).toEqual({
            query,
            variables,
            code: "BAD_USER_INPUT",
          });
          expect(error?.extensions?.["argumentName"]).toMatch(argumentName);
          expect(error?.message).toMatch(/NUL|not valid Unicode/);
        }
        expect(counting.statements()).toEqual([]);
      },
      { logger: pino({ level: "info" }, sink) },
    );
    const errorLines = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level >= 50);
    expect(errorLines).toEqual([]);
  });
});

describe("12.12 every HTTP error from /graphql is a GraphQL JSON error without internals, in every mode", () => {
  const CASES: Array<
    [
      string,
      { headers?: Record<string, string>; body?: string | Buffer; method?: string },
      number,
      string,
    ]
  > = [
    ["invalid JSON", { headers: json, body: '{"query": ' }, 400, "BAD_REQUEST"],
    ["a JSON null body", { headers: json, body: "null" }, 400, "BAD_REQUEST"],
    ["a JSON string body", { headers: json, body: '"{ sources { name } }"' }, 400, "BAD_REQUEST"],
    ["a batch (array) body", { headers: json, body: "[]" }, 400, "BAD_REQUEST"],
    ["a query that is not a string", { headers: json, body: '{"query": 5}' }, 400, "BAD_REQUEST"],
    [
      "a body that is not JSON (text/plain)",
      { headers: { "content-type": "text/plain" }, body: "{ sources { name } }" },
      400,
      "BAD_REQUEST",
    ],
    [
      "a body in an unknown charset",
      { headers: { "content-type": "application/json; charset=klingon" }, body: "{}" },
      415,
      "BAD_REQUEST",
    ],
    [
      "a 50 MB body",
      { headers: json, body: Buffer.alloc(50 * 1024 * 1024, 0x20) },
      413,
      "PAYLOAD_TOO_LARGE",
    ],
  ];

  for (const production of [false, true]) {
    it(`${production ? "production" : "default (development)"} mode`, async () => {
      await withApi({ production }, async ({ api }) => {
        for (const [what, opts, status, code] of CASES) {
          const reply = await request(api.url, opts);
          expect({ what, status: reply.status, code: codeOf(reply) }).toEqual({
            what,
            status,
            code,
          });
          expectNoInternals(reply);
        }
      });
    });
  }

  it("internal errors carry a stack only when API_ERROR_STACKS asks for it, never in production", async () => {
    const u = new URL(TEST_SERVER_URL);
    u.pathname = "/gsindex_no_such_database";
    const broken = new PrismaClient({
      adapter: new PrismaPg({ connectionString: u.toString(), max: 1 }),
    });
    try {
      for (const apiErrorStacks of [false, true]) {
        await withApi(
          { apiErrorStacks },
          async ({ api }) => {
            const reply = await request(api.url, {
              headers: json,
              body: body("{ sources { name } }"),
            });
            const error = errorsOf(reply)[0];
            expect(error?.extensions?.["code"]).toBe("INTERNAL_SERVER_ERROR");
            if (apiErrorStacks)
              expect(error?.extensions?.["stacktrace"]).toEqual(
                expect.arrayContaining([expect.stringMatching(/\bat /)]),
              );
            else expect(reply.text).not.toMatch(/stack|\bat [\w.<>]+ \(/);
          },
          { prisma: broken },
        );
      }
    } finally {
      await broken.$disconnect();
    }
    expect(() => loadConfig({ API_ERROR_STACKS: "1", NODE_ENV: "production" })).toThrow(
      ConfigError,
    );
    expect(loadConfig({ API_ERROR_STACKS: "1" }).apiErrorStacks).toBe(true);
  });
});
