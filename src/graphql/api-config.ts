/**
 * What the API reads from the process configuration (src/shared/config.ts parses the environment;
 * this is the slice the API needs, so tests can build one without the rest).
 */
import type { QueryLimits } from './limits';
import type { RateLimitOptions } from './rate-limit';

export interface ApiConfig {
  /** Interface to listen on; `apiPort` 0 picks a free port. */
  apiHost: string;
  apiPort: number;
  /** Keys that may run mutations (GSINDEX_API_KEYS, comma separated). Empty: no mutation can run. */
  apiKeys: readonly string[];
  /** Allowed CORS origins; `*` allows any. */
  apiCorsOrigins: readonly string[];
  apiRateLimit: RateLimitOptions;
  apiQueryLimits: QueryLimits;
  /** Largest `first`/`last` accepted by a connection. */
  apiMaxPageSize: number;
  /** Production hides the Sandbox landing page and introspection stays on (public API). */
  production: boolean;
  /** Prefix of every Redis key this API writes (the rate limiter adds `ratelimit:`). */
  redisKeyPrefix: string;
}

export const DEFAULT_API_CONFIG: ApiConfig = {
  apiHost: '127.0.0.1',
  apiPort: 4000,
  apiKeys: [],
  apiCorsOrigins: ['*'],
  apiRateLimit: { maxRequests: 600, windowMs: 60_000 },
  apiQueryLimits: { maxDepth: 10, maxComplexity: 50_000, defaultListSize: 10 },
  apiMaxPageSize: 100,
  production: false,
  redisKeyPrefix: 'gsindex:',
};
