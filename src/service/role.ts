/** What every role of the service is started with, and what it hands back. */
import type { CrawlQueues, QueueStore } from "../crawler/queues";
import type { Config, ServeRole } from "../shared/config";
import type { Db } from "../shared/db";
import type { Logger } from "../shared/logger";
import type { Metrics } from "../shared/metrics";

export interface RoleContext {
  config: Readonly<Config>;
  db: Db;
  metrics: Metrics;
  /** The crawl's queues: null when only the management role runs (it needs no Redis). */
  queues: CrawlQueues | null;
  /** Where the queues live (Redis, or BullMQ's PostgreSQL backend): QUEUE_BACKEND, settled at start. */
  queueStore: QueueStore;
  logger: Logger;
}

export interface StartedRole {
  name: ServeRole;
  stop(): Promise<void>;
}
