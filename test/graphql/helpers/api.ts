/**
 * Starts the real API (express + Apollo) on 127.0.0.1:0 over a test database, and sends real HTTP
 * requests to it. The Prisma client counts the SQL statements it sends, for the N+1 assertions.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import type { Redis } from "ioredis";
import { Pool } from "pg";
import type { ApiConfig } from "../../../src/graphql/api-config";
import type { ApiEnqueue } from "../../../src/graphql/context";
import { startApi, type ApiDeps, type RunningApi } from "../../../src/graphql/server";
import { PrismaClient } from "../../../src/generated/prisma/client";
import { registerPgPool } from "../../../src/shared/db";
import { silentLogger, type Logger } from "../../../src/shared/logger";

export const TEST_API_KEY = "test-key-0123456789";

export function testApiConfig(overrides: Partial<ApiConfig> = {}): ApiConfig {
  return {
    apiHost: "127.0.0.1",
    apiPort: 0,
    apiKeys: [TEST_API_KEY, "second-key"],
    apiCorsOrigins: ["*"],
    apiRateLimitMax: 0,
    // The rate limit counts in fixed windows aligned to the clock: a test whose requests straddle a window's
    // end would see its count reset mid-test. With the longest window the setting allows, that edge is
    // midnight UTC, not every minute (a test that is about the window sets its own).
    apiRateLimitWindowMs: 86_400_000,
    apiTrustProxyHops: 0,
    apiMaxPageSize: 100,
    apiMaxDepth: 10,
    apiMaxComplexity: 50_000,
    apiRawHistoryMaxHours: 48,
    apiMaxBodyBytes: 65_536,
    apiMaxTokens: 2000,
    apiMaxFields: 200,
    apiMaxAliases: 30,
    apiRateLimitComplexityPerRead: 100,
    apiAuthFailureLimit: 0, // off, like the read rate limit: tests send wrong keys on purpose
    apiAuthFailureWindowMs: 900_000,
    apiErrorStacks: false,
    production: false,
    queuePrefix: `gsindex-test-${process.pid}-${Date.now().toString(36)}`,
    historyRawDays: 7,
    crawlIntervalMs: 300_000,
    queryFromIndex: true,
    queryIntervalMs: 300_000,
    ...overrides,
  };
}

export interface CountingDb {
  db: PrismaClient;
  /** SQL statements sent since the last reset. */
  statements(): string[];
  reset(): void;
}

export function createCountingDb(url: string): CountingDb {
  const pool = new Pool({ connectionString: url, max: 5 });
  const db = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    log: [{ emit: "event", level: "query" }],
  });
  // The crawl's writes go to the pool directly (src/crawler/store/batch-write.ts); the API's through Prisma.
  registerPgPool(db, pool);
  let seen: string[] = [];
  db.$on("query", (e) => {
    seen.push(e.query);
  });
  return { db, statements: () => seen, reset: () => (seen = []) };
}

export interface GqlResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  data: T | null | undefined;
  errors:
    | Array<{
        message: string;
        path?: Array<string | number>;
        extensions?: Record<string, unknown>;
      }>
    | undefined;
}

export interface TestApi {
  api: RunningApi;
  baseUrl: string;
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GqlResponse<T>>;
  close(): Promise<void>;
}

export async function startTestApi(opts: {
  db: PrismaClient;
  config?: Partial<ApiConfig>;
  redis?: Redis;
  enqueue?: ApiEnqueue;
  logger?: Logger;
  mountRoutes?: ApiDeps["mountRoutes"];
  apiLatency?: ApiDeps["apiLatency"];
}): Promise<TestApi> {
  const api = await startApi({
    prisma: opts.db,
    config: testApiConfig(opts.config),
    logger: opts.logger ?? silentLogger,
    ...(opts.redis ? { redis: opts.redis } : {}),
    ...(opts.enqueue ? { enqueue: opts.enqueue } : {}),
    ...(opts.mountRoutes ? { mountRoutes: opts.mountRoutes } : {}),
    ...(opts.apiLatency ? { apiLatency: opts.apiLatency } : {}),
  });
  const baseUrl = api.url.replace(/\/graphql$/, "");
  return {
    api,
    baseUrl,
    async gql<T>(
      query: string,
      variables: Record<string, unknown> = {},
      headers: Record<string, string> = {},
    ) {
      const res = await fetch(api.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json()) as { data?: T | null; errors?: GqlResponse["errors"] };
      return { status: res.status, headers: res.headers, data: body.data, errors: body.errors };
    },
    close: () => api.close(),
  };
}

export const auth = (key = TEST_API_KEY): Record<string, string> => ({
  authorization: `Bearer ${key}`,
});
