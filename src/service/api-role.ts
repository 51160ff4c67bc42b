/**
 * The API role: src/graphql's server with the operator's routes, the crawl's queues for the mutations
 * that enqueue, and a Redis connection of its own for the shared rate limit (in PostgreSQL when the queues are
 * there and there is no Redis).
 */
import {
  createRedis,
  enqueueCrawl,
  enqueueServerQuery,
  removeSourceJobs,
  type CancelledSource,
  type CrawlQueues,
} from "../crawler/queues";
import type { ApiDeps, RunningApi } from "../graphql/server";
import { operatorRoutes } from "./operator-routes";
import type { RoleContext, StartedRole } from "./role";

export interface StartedApiRole extends StartedRole {
  /** Where the API listens (the bound port, so API_PORT=0 works). */
  url: string;
}

function enqueueOn(queues: CrawlQueues | null): ApiDeps["enqueue"] {
  if (!queues) return {};
  return {
    crawl: async (sourceId: number) => void (await enqueueCrawl(queues, sourceId)),
    query: async (serverId: number) => void (await enqueueServerQuery(queues, serverId)),
    cancelSource: async (source: CancelledSource) => void (await removeSourceJobs(queues, source)),
  };
}

export async function startApiRole({
  config,
  db,
  metrics,
  queues,
  queueStore,
  logger,
}: RoleContext): Promise<StartedApiRole> {
  // Loaded here, not imported at the top: the other roles never pay for Apollo and type-graphql.
  const { startApi } = require("../graphql/server") as typeof import("../graphql/server");
  const redis = queueStore.backend === "postgres" ? undefined : createRedis(config.redisUrl);
  const deps: ApiDeps = {
    apiLatency: metrics.apiLatency,
    mountRoutes: operatorRoutes(config, metrics, queues),
    prisma: db,
    redis,
    rateLimitInPostgres: queueStore.backend === "postgres",
    config,
    logger: logger.child({ role: "api" }),
    enqueue: enqueueOn(queues),
  };
  let api: RunningApi;
  try {
    api = await startApi(deps);
  } catch (err) {
    await redis?.quit().catch(() => undefined);
    throw err;
  }
  logger.info({ url: api.url }, "API listening");
  return {
    name: "api",
    url: api.url,
    stop: async () => {
      await api.close();
      await redis?.quit().catch(() => undefined);
    },
  };
}
