/**
 * The HTTP side of the API: express 5 with CORS, /healthz, /readyz, a hook for the routes other parts
 * mount (/metrics, the bull-board dashboard), and Apollo on /graphql (Sandbox there outside production).
 * `startApi` listens and hands back a `close()` that stops Apollo and the HTTP server in that order;
 * the database and Redis belong to the caller, who closes them after.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import {
  ApolloServerPluginLandingPageLocalDefault,
  ApolloServerPluginLandingPageProductionDefault,
} from '@apollo/server/plugin/landingPage/default';
import { expressMiddleware } from '@as-integrations/express5';
import cors from 'cors';
import express from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from '../shared/logger';
import { checkReadiness } from '../shared/readiness';
import { DEFAULT_LIST_SIZE_FOR_COMPLEXITY, type ApiConfig } from './api-config';
import { createApiKeyChecker } from './auth';
import { createContext, type ApiContext, type ApiEnqueue } from './context';
import type { Db } from '../shared/db';
import { formatApiError } from './errors';
import { errorLoggingPlugin, latencyPlugin, limitsPlugin, type LatencyHistogram } from './plugins';
import { createMemoryRateLimiter, createRedisRateLimiter } from './rate-limit';
import { buildApiSchema } from './schema';

export interface ApiDeps {
  prisma: Db;
  /** Shared Redis for the rate limit; without it each process limits in memory. */
  redis?: Redis;
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

/**
 * The client identity for the rate limit: the peer address, or with API_TRUST_PROXY_HOPS the address
 * that many trusted proxies forwarded (express's req.ip); never a header an untrusted peer can forge.
 */
function clientKeyOf(req: express.Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

export async function startApi(deps: ApiDeps): Promise<RunningApi> {
  const { config, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.apiTrustProxyHops > 0 ? config.apiTrustProxyHops : false);
  const httpServer = http.createServer(app);

  const schema = await buildApiSchema();
  const rateLimit = { maxRequests: config.apiRateLimitMax, windowMs: config.apiRateLimitWindowMs };
  const rateLimiter = deps.redis
    ? createRedisRateLimiter(deps.redis, `${config.queuePrefix}:api-ratelimit:`, rateLimit, (err) => logger.warn({ err }, 'rate limit not applied: Redis unavailable'))
    : createMemoryRateLimiter(rateLimit);
  const queryLimits = { maxDepth: config.apiMaxDepth, maxComplexity: config.apiMaxComplexity, defaultListSize: DEFAULT_LIST_SIZE_FOR_COMPLEXITY };
  const checkApiKey = createApiKeyChecker(config.apiKeys);

  const apollo = new ApolloServer<ApiContext>({
    schema,
    formatError: formatApiError,
    includeStacktraceInErrorResponses: false,
    introspection: true,
    // gsindex serve owns SIGTERM/SIGINT: Apollo re-raising the signal would kill workers mid-job.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      limitsPlugin(queryLimits, rateLimiter),
      errorLoggingPlugin(),
      ...(deps.apiLatency ? [latencyPlugin(deps.apiLatency)] : []),
      config.production
        ? ApolloServerPluginLandingPageProductionDefault({ footer: false })
        : ApolloServerPluginLandingPageLocalDefault({ footer: false, embed: true }),
    ],
    logger: {
      debug: (m: string) => logger.debug(m),
      info: (m: string) => logger.info(m),
      warn: (m: string) => logger.warn(m),
      error: (m: string) => logger.error(m),
    },
  });
  await apollo.start();

  const allowAnyOrigin = config.apiCorsOrigins.includes('*');
  app.use(cors({ origin: allowAnyOrigin ? true : [...config.apiCorsOrigins], maxAge: 600 }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const { ready, results, failed } = await checkReadiness({
      database: () => deps.prisma.$queryRaw`SELECT 1`,
      redis: deps.redis ? () => deps.redis!.ping() : undefined,
    });
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', ...results, failed: failed.map((f) => f.name), reasons: Object.fromEntries(failed.map((f) => [f.name, f.reason])) });
  });

  deps.mountRoutes?.(app);

  app.use(
    '/graphql',
    express.json({ limit: '256kb' }),
    expressMiddleware(apollo, {
      context: ({ req, res }) => {
        const requestId = randomUUID();
        res.setHeader('x-request-id', requestId);
        return Promise.resolve(
          createContext({
            prisma: deps.prisma,
            logger: logger.child({ requestId }),
            requestId,
            now: new Date(),
            clientKey: clientKeyOf(req),
            apiKeyStatus: checkApiKey(req.headers.authorization),
            enqueue: deps.enqueue ?? {},
            config,
          }),
        );
      },
    }),
  );

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.apiPort, config.apiHost, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  const host = config.apiHost.includes(':') ? `[${config.apiHost}]` : config.apiHost;
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}/graphql`;
  logger.info({ url }, 'GraphQL API listening');

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
