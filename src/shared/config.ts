/**
 * The process configuration: parsed once from the environment at the process edge, validated, frozen,
 * and passed down. This is the only module that reads process.env. Every bad value is reported with
 * its variable name; all of them at once.
 */
import { z } from 'zod';
import ipaddr from 'ipaddr.js';

export const MASTER_SOURCE_KINDS = ['VALVE_UDP', 'STEAM_WEB_API', 'MANAGEMENT', 'ADDRESS_LIST'] as const;
export type MasterSourceKindName = (typeof MASTER_SOURCE_KINDS)[number];

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gsindex';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const bool = z.enum(['1', '0', 'true', 'false', 'yes', 'no']).transform((v) => v === '1' || v === 'true' || v === 'yes');

const masterSourceSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a slug: lower-case letters, digits and dashes'),
    kind: z.enum(MASTER_SOURCE_KINDS),
    host: z.string().min(1),
    port: int(1, 65535).optional(),
    filter: z.string().max(500).default(''),
    regions: z.array(int(0, 255)).default([]),
    intervalMs: int(1000, 7 * 24 * 3600 * 1000).optional(),
    enabled: z.boolean().default(true),
    options: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type MasterSourceConfig = z.infer<typeof masterSourceSchema>;

/** An allow-list entry: a CIDR range (or a bare IP), or an exact host name that may be resolved. */
export type AllowEntry = { kind: 'cidr'; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; text: string } | { kind: 'host'; name: string };

function parseAllowEntry(text: string): AllowEntry | null {
  if (text.includes('/')) {
    try {
      return { kind: 'cidr', range: ipaddr.parseCIDR(text), text };
    } catch {
      return null;
    }
  }
  if (ipaddr.isValid(text)) {
    const ip = ipaddr.parse(text);
    return { kind: 'cidr', range: [ip, ip.kind() === 'ipv4' ? 32 : 128], text };
  }
  return /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(text) ? { kind: 'host', name: text.toLowerCase() } : null;
}

const envSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'a postgres:// URL').default(DEFAULT_DATABASE_URL),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'a redis:// URL').default(DEFAULT_REDIS_URL),
  GSINDEX_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and -').default('gsindex'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CRAWL_INTERVAL_MS: int(1000, 7 * 24 * 3600 * 1000).default(300_000),
  WORKER_CONCURRENCY: int(1, 256).default(16),
  QUERY_CONCURRENCY: int(1, 100_000).default(800),
  QUERY_BATCH_SIZE: int(1, 5000).default(250),
  QUERY_TIMEOUT_MS: int(50, 60_000).default(1500),
  QUERY_RETRIES: int(0, 10).default(1),
  MASTER_TIMEOUT_MS: int(50, 120_000).default(5000),
  JOB_ATTEMPTS: int(1, 100).default(5),
  /** How often workers look for jobs whose worker died; such jobs run again. */
  WORKER_STALLED_INTERVAL_MS: int(100, 3_600_000).default(30_000),
  WORKER_LOCK_DURATION_MS: int(100, 3_600_000).default(30_000),
  /** On SIGTERM, how long jobs in flight may finish before they are handed back to the queue. */
  STOP_GRACE_MS: int(0, 3_600_000).default(25_000),
  /** Deadline for one listing run (one region of a master, one Steam Web API listing). */
  LIST_TIMEOUT_MS: int(100, 24 * 3_600_000).default(600_000),
  JOB_BACKOFF_MS: int(0, 3_600_000).default(2000),
  /** How long a crawl job waits for PostgreSQL or Redis to come back, without spending attempts, before it fails as usual. */
  JOB_OUTAGE_WAIT_MS: int(0, 24 * 3_600_000).default(900_000),
  OFFLINE_AFTER_FAILURES: int(1, 1000).default(3),
  DELIST_AFTER_MISSED_CRAWLS: int(1, 1000).default(3),
  HISTORY_RAW_DAYS: int(1, 366).default(7),
  /** 0 keeps rollups forever. */
  HISTORY_ROLLUP_DAYS: int(0, 36_600).default(0),
  /** More query ports than this on one IP marks its servers as suspected fakes (allow-listed ranges exempt); 0 disables. */
  FAKE_PORTS_PER_IP: int(0, 65535).default(200),
  // Inflated player counts (docs/fake-players.md); 0 switches a rule off.
  FAKE_INFO_PLAYERS_EXCESS: int(0, 65535).default(8),
  FAKE_SAME_NAME_PLAYERS: int(0, 65535).default(5),
  FAKE_ZERO_DURATION_PLAYERS: int(0, 65535).default(5),
  FAKE_SHARED_NAME_SERVERS: int(0, 1_000_000).default(3),
  FAKE_SHARED_NAMES_PER_SERVER: int(0, 65535).default(5),
  MASTER_SOURCES: z.string().default('[]'),
  ADDRESS_ALLOW_LIST: z.string().default(''),
  STEAM_WEB_API_KEY: z.string().optional(),
  MANAGEMENT_HOST: z.string().default('0.0.0.0'),
  MANAGEMENT_PORT: int(1, 65535).default(51963),
  // Issue 12 (safe on the open internet): the management port and every outbound contact.
  /** Relays (CIDR ranges or IPs) whose connections may register game servers at addresses other than their own. */
  MANAGEMENT_TRUSTED_CIDRS: z.string().default(''),
  /** A management connection with no registered game server that completes no line for this long is closed; 0 never. */
  MANAGEMENT_IDLE_TIMEOUT_MS: int(0, 3_600_000).default(30_000),
  API_HOST: z.string().default('0.0.0.0'),
  API_PORT: int(0, 65535).default(4000),
  GSINDEX_API_KEYS: z.string().default(''),
  /** Comma-separated allowed origins, or '*' for any. */
  API_CORS_ORIGINS: z.string().default('*'),
  /** Read requests per client per window; 0 disables the limit. */
  API_RATE_LIMIT: int(0, 1_000_000).default(600),
  API_RATE_LIMIT_WINDOW_MS: int(1000, 24 * 3600 * 1000).default(60_000),
  /** Proxies in front of the API to trust for X-Forwarded-For (the client of the rate limit): 0 = none. */
  API_TRUST_PROXY_HOPS: int(0, 10).default(0),
  API_MAX_PAGE_SIZE: int(1, 10_000).default(100),
  API_MAX_DEPTH: int(2, 100).default(10),
  API_MAX_COMPLEXITY: int(100, 100_000_000).default(50_000),
  /** Longest range a RAW history query may ask for, in hours. */
  API_RAW_HISTORY_MAX_HOURS: int(1, 24 * 366).default(48),
  // The API facing hostile clients (docs/graphql.md, "Limits"): checked before a request is parsed or run.
  /** Largest request body; a bigger one is refused with 413 before it is read. */
  API_MAX_BODY_BYTES: int(1024, 16 * 1024 * 1024).default(65_536),
  /** Most lexical tokens in a query document (graphql-js stops parsing there). */
  API_MAX_TOKENS: int(100, 1_000_000).default(2000),
  /** Most field selections written in a query document, and most of them aliased. */
  API_MAX_FIELDS: int(10, 100_000).default(200),
  API_MAX_ALIASES: int(0, 100_000).default(30),
  /** A read costs one unit of API_RATE_LIMIT per this much query complexity (rounded up, at least one). */
  API_RATE_LIMIT_COMPLEXITY_PER_READ: int(1, 100_000_000).default(100),
  /** Failed authentications (a wrong API key) per client per window before every key it sends is refused; 0 disables. */
  API_AUTH_FAILURE_LIMIT: int(0, 1_000_000).default(10),
  API_AUTH_FAILURE_WINDOW_MS: int(1000, 24 * 3600 * 1000).default(900_000),
  /** Outside production only: internal errors carry their stack trace to the client, for debugging. */
  API_ERROR_STACKS: bool.default(false),
  NODE_ENV: z.string().default('development'),
  SERVE_ROLES: z.string().default('api,scheduler,worker,management'),
  MIGRATE_ON_START: bool.default(true),
});

export const SERVE_ROLES = ['api', 'scheduler', 'worker', 'management'] as const;
export type ServeRole = (typeof SERVE_ROLES)[number];

export interface Config {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  logLevel: string;
  crawlIntervalMs: number;
  workerConcurrency: number;
  queryConcurrency: number;
  queryBatchSize: number;
  queryTimeoutMs: number;
  queryRetries: number;
  masterTimeoutMs: number;
  jobAttempts: number;
  workerStalledIntervalMs: number;
  workerLockDurationMs: number;
  stopGraceMs: number;
  listTimeoutMs: number;
  jobBackoffMs: number;
  jobOutageWaitMs: number;
  offlineAfterFailures: number;
  delistAfterMissedCrawls: number;
  historyRawDays: number;
  historyRollupDays: number;
  fakePortsPerIp: number;
  /** Thresholds of the fake-player rules (docs/fake-players.md). */
  fakePlayers: { infoExcess: number; sameNamePlayers: number; zeroDurationPlayers: number; sharedNameServers: number; sharedNamesPerServer: number };
  masterSources: readonly MasterSourceConfig[];
  addressAllowList: readonly AllowEntry[];
  steamWebApiKey: string | undefined;
  managementHost: string;
  managementPort: number;
  /** Canonical CIDR text ('203.0.113.0/24'); a bare IP becomes its /32 or /128. */
  managementTrustedCidrs: readonly string[];
  managementIdleTimeoutMs: number;
  apiHost: string;
  apiPort: number;
  apiKeys: readonly string[];
  apiCorsOrigins: readonly string[];
  apiRateLimitMax: number;
  apiRateLimitWindowMs: number;
  apiTrustProxyHops: number;
  apiMaxPageSize: number;
  apiMaxDepth: number;
  apiMaxComplexity: number;
  apiRawHistoryMaxHours: number;
  apiMaxBodyBytes: number;
  apiMaxTokens: number;
  apiMaxFields: number;
  apiMaxAliases: number;
  apiRateLimitComplexityPerRead: number;
  apiAuthFailureLimit: number;
  apiAuthFailureWindowMs: number;
  apiErrorStacks: boolean;
  /** NODE_ENV=production: stack traces never reach a client, whatever API_ERROR_STACKS says. */
  production: boolean;
  roles: readonly ServeRole[];
  migrateOnStart: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const SECRET = new Set(['STEAM_WEB_API_KEY', 'GSINDEX_API_KEYS', 'DATABASE_URL', 'REDIS_URL']);

function shown(name: string, env: Record<string, string | undefined>): string {
  const value = env[name];
  if (value === undefined) return '';
  if (SECRET.has(name)) return ' (value hidden)';
  return ` (got ${JSON.stringify(value.length > 80 ? value.slice(0, 80) + '…' : value)})`;
}

/** Parse and validate; throws ConfigError listing every bad variable. Empty strings count as unset. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<Config> {
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') cleaned[key] = value.trim();
  }
  const parsed = envSchema.safeParse(cleaned);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = String(issue.path[0] ?? '?');
      problems.push(`${name}: ${issue.message}${shown(name, cleaned)}`);
    }
    throw new ConfigError(problems);
  }
  const e = parsed.data;

  let masterSources: MasterSourceConfig[] = [];
  try {
    const list = z.array(masterSourceSchema).safeParse(JSON.parse(e.MASTER_SOURCES));
    if (list.success) {
      masterSources = list.data;
      const names = new Set<string>();
      for (const s of masterSources) {
        if (names.has(s.name)) problems.push(`MASTER_SOURCES: duplicate name '${s.name}'`);
        names.add(s.name);
      }
    } else {
      for (const issue of list.error.issues) problems.push(`MASTER_SOURCES[${issue.path.join('.')}]: ${issue.message}`);
    }
  } catch (err) {
    problems.push(`MASTER_SOURCES: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }

  const addressAllowList: AllowEntry[] = [];
  for (const text of e.ADDRESS_ALLOW_LIST.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const entry = parseAllowEntry(text);
    if (entry) addressAllowList.push(entry);
    else problems.push(`ADDRESS_ALLOW_LIST: '${text}' is neither a CIDR range, an IP address nor a host name`);
  }

  const managementTrustedCidrs: string[] = [];
  for (const text of e.MANAGEMENT_TRUSTED_CIDRS.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const entry = parseAllowEntry(text);
    if (entry?.kind === 'cidr') managementTrustedCidrs.push(`${entry.range[0].toString()}/${entry.range[1]}`);
    else problems.push(`MANAGEMENT_TRUSTED_CIDRS: '${text}' is neither a CIDR range nor an IP address`);
  }

  const roles: ServeRole[] = [];
  for (const role of e.SERVE_ROLES.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if ((SERVE_ROLES as readonly string[]).includes(role)) roles.push(role as ServeRole);
    else problems.push(`SERVE_ROLES: unknown role '${role}' (expected ${SERVE_ROLES.join(', ')})`);
  }

  if (e.API_ERROR_STACKS && e.NODE_ENV === 'production') problems.push('API_ERROR_STACKS: stack traces are never sent to clients in production (NODE_ENV=production)');

  if (problems.length > 0) throw new ConfigError(problems);

  return Object.freeze({
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.GSINDEX_QUEUE_PREFIX,
    logLevel: e.LOG_LEVEL,
    crawlIntervalMs: e.CRAWL_INTERVAL_MS,
    workerConcurrency: e.WORKER_CONCURRENCY,
    queryConcurrency: e.QUERY_CONCURRENCY,
    queryBatchSize: e.QUERY_BATCH_SIZE,
    queryTimeoutMs: e.QUERY_TIMEOUT_MS,
    queryRetries: e.QUERY_RETRIES,
    masterTimeoutMs: e.MASTER_TIMEOUT_MS,
    jobAttempts: e.JOB_ATTEMPTS,
    workerStalledIntervalMs: e.WORKER_STALLED_INTERVAL_MS,
    workerLockDurationMs: e.WORKER_LOCK_DURATION_MS,
    stopGraceMs: e.STOP_GRACE_MS,
    listTimeoutMs: e.LIST_TIMEOUT_MS,
    jobBackoffMs: e.JOB_BACKOFF_MS,
    jobOutageWaitMs: e.JOB_OUTAGE_WAIT_MS,
    offlineAfterFailures: e.OFFLINE_AFTER_FAILURES,
    delistAfterMissedCrawls: e.DELIST_AFTER_MISSED_CRAWLS,
    historyRawDays: e.HISTORY_RAW_DAYS,
    historyRollupDays: e.HISTORY_ROLLUP_DAYS,
    fakePortsPerIp: e.FAKE_PORTS_PER_IP,
    fakePlayers: Object.freeze({
      infoExcess: e.FAKE_INFO_PLAYERS_EXCESS,
      sameNamePlayers: e.FAKE_SAME_NAME_PLAYERS,
      zeroDurationPlayers: e.FAKE_ZERO_DURATION_PLAYERS,
      sharedNameServers: e.FAKE_SHARED_NAME_SERVERS,
      sharedNamesPerServer: e.FAKE_SHARED_NAMES_PER_SERVER,
    }),
    masterSources: Object.freeze(masterSources),
    addressAllowList: Object.freeze(addressAllowList),
    steamWebApiKey: e.STEAM_WEB_API_KEY,
    managementHost: e.MANAGEMENT_HOST,
    managementPort: e.MANAGEMENT_PORT,
    managementTrustedCidrs: Object.freeze(managementTrustedCidrs),
    managementIdleTimeoutMs: e.MANAGEMENT_IDLE_TIMEOUT_MS,
    apiHost: e.API_HOST,
    apiPort: e.API_PORT,
    apiKeys: Object.freeze(e.GSINDEX_API_KEYS.split(',').map((s) => s.trim()).filter((s) => s !== '')),
    apiCorsOrigins: Object.freeze(e.API_CORS_ORIGINS.split(',').map((s) => s.trim()).filter((s) => s !== '')),
    apiRateLimitMax: e.API_RATE_LIMIT,
    apiRateLimitWindowMs: e.API_RATE_LIMIT_WINDOW_MS,
    apiTrustProxyHops: e.API_TRUST_PROXY_HOPS,
    apiMaxPageSize: e.API_MAX_PAGE_SIZE,
    apiMaxDepth: e.API_MAX_DEPTH,
    apiMaxComplexity: e.API_MAX_COMPLEXITY,
    apiRawHistoryMaxHours: e.API_RAW_HISTORY_MAX_HOURS,
    apiMaxBodyBytes: e.API_MAX_BODY_BYTES,
    apiMaxTokens: e.API_MAX_TOKENS,
    apiMaxFields: e.API_MAX_FIELDS,
    apiMaxAliases: e.API_MAX_ALIASES,
    apiRateLimitComplexityPerRead: e.API_RATE_LIMIT_COMPLEXITY_PER_READ,
    apiAuthFailureLimit: e.API_AUTH_FAILURE_LIMIT,
    apiAuthFailureWindowMs: e.API_AUTH_FAILURE_WINDOW_MS,
    apiErrorStacks: e.API_ERROR_STACKS,
    production: e.NODE_ENV === 'production',
    roles: Object.freeze(roles),
    migrateOnStart: e.MIGRATE_ON_START,
  });
}
