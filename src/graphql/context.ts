/**
 * The per-request context: database, loaders (new for every request, so nothing is cached across
 * clients), a child logger carrying the request id, the caller's identity for the rate limit and its
 * API-key status for mutations.
 */
import type { Logger } from "../shared/logger";
import type { ApiKeyStatus } from "./auth";
import type { ApiConfig } from "./api-config";
import type { Db } from "../shared/db";
import type { CancelledSource } from "../crawler/queues";
import { createLoaders, type Loaders } from "./loaders";

/** Enqueue a query of one game server now (the crawler's queue); absent when the API runs without one. */
export type EnqueueQuery = (gameServerId: number) => Promise<void>;
/** Start a crawl of one list source now. */
export type EnqueueCrawl = (sourceId: number) => Promise<void>;

/** Clear a disabled or removed source's scheduler and queued jobs (its crawls are closed already). */
export type CancelSourceJobs = (source: CancelledSource) => Promise<void>;

export interface ApiEnqueue {
  query?: EnqueueQuery;
  crawl?: EnqueueCrawl;
  cancelSource?: CancelSourceJobs;
}

export interface ApiContext {
  prisma: Db;
  loaders: Loaders;
  logger: Logger;
  requestId: string;
  /** The request's clock reading: every relative time in one request uses the same instant. */
  now: Date;
  clientKey: string;
  /** Units of the read rate limit this request paid before it was parsed (see http-guards.ts). */
  readUnitsPaid: number;
  apiKeyStatus: ApiKeyStatus;
  enqueue: ApiEnqueue;
  config: ApiConfig;
}

export function createContext(fields: Omit<ApiContext, "loaders">): ApiContext {
  return { ...fields, loaders: createLoaders(fields.prisma) };
}
