/**
 * The HTTP side of the API: express 5 with CORS, /healthz, /readyz, a hook for the routes other parts
 * mount (/metrics, the bull-board dashboard), the web pages of src/web (GraphiQL on a browser's GET
 * /graphql), and Apollo on /graphql, behind the guards of http-guards.ts (failed-authentication limit on
 * every route that takes a key; read rate limit, body size and document limits before Apollo parses
 * anything), and, last, an error handler that answers every error as GraphQL-shaped JSON without internals
 * (http-errors.ts).
 * `startApi` listens and hands back a `close()` that stops Apollo and the HTTP server in that order;
 * the database and Redis belong to the caller, who closes them after.
 */
import "reflect-metadata";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import cors from "cors";
import express from "express";
import type { Redis } from "ioredis";
import type { Logger } from "../shared/logger";
import { checkReadiness } from "../shared/readiness";
import { DEFAULT_LIST_SIZE_FOR_COMPLEXITY, type ApiConfig } from "./api-config";
import { createApiKeyChecker } from "./auth";
import { createContext, type ApiContext, type ApiEnqueue } from "./context";
import type { Db } from "../shared/db";
import { createErrorFormatter } from "./errors";
import { graphqlErrorHandler } from "./http-errors";
import {
  assignRequestId,
  authFailureGuard,
  clientKeyOf,
  documentLimitsGuard,
  readRateLimitGuard,
  readUnitsPaidOf,
  requestIdOf,
} from "./http-guards";
import {
  errorLoggingPlugin,
  latencyPlugin,
  limitsPlugin,
  noStorePlugin,
  type LatencyHistogram,
} from "./plugins";
import {
  createMemoryRateLimiter,
  createPostgresRateLimiter,
  createRedisRateLimiter,
  type RateLimitOptions,
  type RateLimiter,
} from "./rate-limit";
import { queueSchemaOf } from "../crawler/queues";
import { buildApiSchema } from "./schema";
import { createWebRouter } from "../web/routes";

export interface ApiDeps {
  prisma: Db;
  /** Shared Redis for the rate limit; without it each process limits in memory (or in PostgreSQL, below). */
  redis?: Redis;
  /** With the queues on PostgreSQL and no Redis: the rate-limit counters go to the queue schema. */
  rateLimitInPostgres?: boolean;
  config: ApiConfig;
  logger: Logger;
  enqueue?: ApiEnqueue;
  /** Request latency goes to this histogram when given (Metrics.apiLatency; /metrics is mounted by the caller). */
  apiLatency?: LatencyHistogram;
  /**
   * Extra routes mounted before /graphql: /metrics (prom-client), the bull-board dashboard. Called with
   * the express app once, at start.
   */
  mountRoutes?: (app: express.Express) => void;
}

export interface RunningApi {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startApi(deps: ApiDeps): Promise<RunningApi> {
  const { config, logger } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.apiTrustProxyHops > 0 ? config.apiTrustProxyHops : false);
  const httpServer = http.createServer(app);

  const schema = await buildApiSchema();
  const limiter = (name: string, options: RateLimitOptions): RateLimiter =>
    deps.redis
      ? createRedisRateLimiter(deps.redis, `${config.queuePrefix}:${name}:`, options, (err) =>
          logger.warn({ err }, `${name}: Redis unavailable, counted by this process alone`),
        )
      : deps.rateLimitInPostgres
        ? createPostgresRateLimiter(
            deps.prisma,
            queueSchemaOf(config.queuePrefix),
            `${name}:`,
            options,
            (err) =>
              logger.warn(
                { err },
                `${name}: PostgreSQL counter unavailable, counted by this process alone`,
              ),
          )
        : createMemoryRateLimiter(options);
  const rateLimiter = limiter("api-ratelimit", {
    maxRequests: config.apiRateLimitMax,
    windowMs: config.apiRateLimitWindowMs,
  });
  const authFailures = limiter("api-authfail", {
    maxRequests: config.apiAuthFailureLimit,
    windowMs: config.apiAuthFailureWindowMs,
  });
  const queryLimits = {
    maxDepth: config.apiMaxDepth,
    maxComplexity: config.apiMaxComplexity,
    defaultListSize: DEFAULT_LIST_SIZE_FOR_COMPLEXITY,
    complexityPerRead: config.apiRateLimitComplexityPerRead,
  };
  const documentLimits = {
    maxTokens: config.apiMaxTokens,
    maxFields: config.apiMaxFields,
    maxAliases: config.apiMaxAliases,
  };
  const checkApiKey = createApiKeyChecker(config.apiKeys);
  // Stack traces reach a client only when asked for outside production (loadConfig refuses both together).
  const exposeStacks = config.apiErrorStacks && !config.production;

  const apollo = new ApolloServer<ApiContext>({
    schema,
    formatError: createErrorFormatter({ exposeStacks }),
    includeStacktraceInErrorResponses: exposeStacks,
    // documentLimitsGuard has counted the tokens already; this keeps Apollo's own parse bounded too.
    parseOptions: { maxTokens: config.apiMaxTokens },
    introspection: true,
    // gsindex serve owns SIGTERM/SIGINT: Apollo re-raising the signal would kill workers mid-job.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      limitsPlugin(queryLimits, rateLimiter),
      errorLoggingPlugin(),
      ...(deps.apiLatency ? [latencyPlugin(deps.apiLatency)] : []),
      // A browser's GET /graphql gets the offline GraphiQL of src/web instead (Sandbox loads from a CDN).
      ApolloServerPluginLandingPageDisabled(),
      // The schema has no cache hints, so Apollo's cache-control plugin only ever answered no-store, yet its
      // per-field hook made Apollo wrap every resolver of every request; noStorePlugin sends the same header.
      ApolloServerPluginCacheControlDisabled(),
      noStorePlugin(),
    ],
    logger: {
      debug: (m: string) => logger.debug(m),
      info: (m: string) => logger.info(m),
      warn: (m: string) => logger.warn(m),
      error: (m: string) => logger.error(m),
    },
  });
  await apollo.start();

  const allowAnyOrigin = config.apiCorsOrigins.includes("*");
  app.use(assignRequestId);
  app.use(cors({ origin: allowAnyOrigin ? true : [...config.apiCorsOrigins], maxAge: 600 }));

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const { ready, results, failed } = await checkReadiness({
      database: () => deps.prisma.$queryRaw`SELECT 1`,
      redis: deps.redis ? () => deps.redis!.ping() : undefined,
    });
    res.status(ready ? 200 : 503).json({
      status: ready ? "ready" : "not ready",
      ...results,
      failed: failed.map((f) => f.name),
      reasons: Object.fromEntries(failed.map((f) => [f.name, f.reason])),
    });
  });

  // Every route below that takes an API key (mutations, the queue dashboard) counts wrong ones.
  app.use(authFailureGuard(authFailures, checkApiKey));

  deps.mountRoutes?.(app);
  app.use(createWebRouter());

  app.use(
    "/graphql",
    readRateLimitGuard(rateLimiter, checkApiKey),
    express.json({ limit: config.apiMaxBodyBytes }),
    documentLimitsGuard(documentLimits),
    expressMiddleware(apollo, {
      context: ({ req, res }) => {
        const requestId = requestIdOf(res);
        return Promise.resolve(
          createContext({
            prisma: deps.prisma,
            logger: logger.child({ requestId }),
            requestId,
            now: new Date(),
            clientKey: clientKeyOf(req),
            readUnitsPaid: readUnitsPaidOf(res),
            apiKeyStatus: checkApiKey(req.headers.authorization),
            enqueue: deps.enqueue ?? {},
            config,
          }),
        );
      },
    }),
  );

  // More routes (a web front end) mount here: after /graphql, before the error handler.

  // Last: errors from any route above (bad JSON, a body too large, a failing route) as GraphQL JSON.
  app.use(
    graphqlErrorHandler({
      logger,
      maxBodyBytes: config.apiMaxBodyBytes,
      exposeStacks,
      requestIdOf,
    }),
  );

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(config.apiPort, config.apiHost, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  const host = config.apiHost.includes(":") ? `[${config.apiHost}]` : config.apiHost;
  const url = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${port}/graphql`;
  logger.info({ url }, "GraphQL API listening");

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      // apollo.stop() drains the HTTP server too (the drain plugin), so in-flight requests finish first.
      closing ??= apollo.stop();
      return closing;
    },
  };
}
