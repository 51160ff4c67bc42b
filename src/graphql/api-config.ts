/**
 * The slice of the process configuration (src/shared/config.ts) the API reads, so tests can build one
 * without the rest, and the defaults they start from.
 */
import type { Config } from "../shared/config";

export type ApiConfig = Pick<
  Config,
  | "apiHost"
  | "apiPort"
  | "apiKeys"
  | "apiCorsOrigins"
  | "apiRateLimitMax"
  | "apiRateLimitWindowMs"
  | "apiTrustProxyHops"
  | "apiMaxPageSize"
  | "apiMaxDepth"
  | "apiMaxComplexity"
  | "apiRawHistoryMaxHours"
  | "apiMaxBodyBytes"
  | "apiMaxTokens"
  | "apiMaxFields"
  | "apiMaxAliases"
  | "apiRateLimitComplexityPerRead"
  | "apiAuthFailureLimit"
  | "apiAuthFailureWindowMs"
  | "apiErrorStacks"
  | "production"
  | "queuePrefix"
  | "historyRawDays"
  | "crawlIntervalMs"
  | "queryFromIndex"
  | "queryIntervalMs"
> &
  // The address policy addServer / addSource answer by; absent: nothing is allow-listed (as the crawler's default).
  Partial<Pick<Config, "addressAllowList">>;

/** A list without `first`/`last` gets this many rows. */
export const DEFAULT_PAGE_SIZE = 20;
/** A list field without `first`/`last` counts as this many items in the complexity estimate. */
export const DEFAULT_LIST_SIZE_FOR_COMPLEXITY = 10;
