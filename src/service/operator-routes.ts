/** The operator's routes (/metrics, the queue dashboard), mounted on the API's express app. */
import type { Express } from "express";
import type { CrawlQueues } from "../crawler/queues";
import type { Config } from "../shared/config";
import type { Metrics } from "../shared/metrics";

export function operatorRoutes(
  config: Readonly<Config>,
  metrics: Metrics,
  queues: CrawlQueues | null,
): (app: Express) => void {
  // Loaded with the API only, like the API itself (api-role.ts).
  const { createApiKeyChecker } = require("../graphql/auth") as typeof import("../graphql/auth");
  const { mountOperatorRoutes } =
    require("../graphql/dashboard") as typeof import("../graphql/dashboard");
  const checkApiKey = createApiKeyChecker(config.apiKeys);
  if (queues) for (const queue of [queues.crawl, queues.query]) metrics.watchQueue(queue);
  return (app) =>
    mountOperatorRoutes(app, {
      renderMetrics: () => metrics.render(),
      queues: queues ? [queues.crawl, queues.query] : [],
      isAuthorized: (authorization) => checkApiKey(authorization) === "valid",
    });
}
