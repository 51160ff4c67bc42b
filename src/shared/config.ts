/**
 * The process configuration: parsed once from the environment at the process edge, validated, frozen,
 * and passed down. This is the only module that reads process.env. Every bad value is reported with
 * its variable name; all of them at once.
 */
import { z } from "zod";
import ipaddr from "ipaddr.js";

export const MASTER_SOURCE_KINDS = [
  "VALVE_UDP",
  "STEAM_WEB_API",
  "MANAGEMENT",
  "ADDRESS_LIST",
] as const;
export type MasterSourceKindName = (typeof MASTER_SOURCE_KINDS)[number];

const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/gsindex";
const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const bool = z
  .enum(["1", "0", "true", "false", "yes", "no"])
  .transform((v) => v === "1" || v === "true" || v === "yes");

const masterSourceSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "a slug: lower-case letters, digits and dashes"),
    kind: z.enum(MASTER_SOURCE_KINDS),
    host: z.string().min(1),
    port: int(1, 65535).optional(),
    filter: z.string().max(500).default(""),
    regions: z.array(int(0, 255)).default([]),
    intervalMs: int(1000, 7 * 24 * 3600 * 1000).optional(),
    enabled: z.boolean().default(true),
    options: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type MasterSourceConfig = z.infer<typeof masterSourceSchema>;

/** An allow-list entry: a CIDR range (or a bare IP), or an exact host name that may be resolved. */
export type AllowEntry =
  | { kind: "cidr"; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; text: string }
  | { kind: "host"; name: string };

function parseAllowEntry(text: string): AllowEntry | null {
  if (text.includes("/")) {
    try {
      return { kind: "cidr", range: ipaddr.parseCIDR(text), text };
    } catch {
      return null;
    }
  }
  if (ipaddr.isValid(text)) {
    const ip = ipaddr.parse(text);
    return { kind: "cidr", range: [ip, ip.kind() === "ipv4" ? 32 : 128], text };
  }
  return /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(text)
    ? { kind: "host", name: text.toLowerCase() }
    : null;
}

/** Splits a comma-separated list; blanks between commas are dropped. */
const commaList = (text: string): readonly string[] =>
  Object.freeze(
    text
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
  );

// The settings below that are more than one value check their parts here; each bad part is one problem
// line of its own (ConfigError), naming the variable and the part.
const masterSources = z
  .string()
  .default("[]")
  .transform((text, ctx): readonly MasterSourceConfig[] => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      ctx.addIssue({
        code: "custom",
        message: `not valid JSON (${err instanceof Error ? err.message : String(err)})`,
      });
      return z.NEVER;
    }
    const list = z.array(masterSourceSchema).safeParse(json);
    if (!list.success) {
      for (const issue of list.error.issues)
        ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
      return z.NEVER;
    }
    const names = new Set<string>();
    for (const source of list.data) {
      if (names.has(source.name))
        ctx.addIssue({ code: "custom", message: `duplicate name '${source.name}'` });
      names.add(source.name);
    }
    return Object.freeze(list.data);
  });

const addressAllowList = z
  .string()
  .default("")
  .transform((text, ctx): readonly AllowEntry[] => {
    const entries: AllowEntry[] = [];
    for (const part of commaList(text)) {
      const entry = parseAllowEntry(part);
      if (entry) entries.push(entry);
      else
        ctx.addIssue({
          code: "custom",
          message: `'${part}' is neither a CIDR range, an IP address nor a host name`,
        });
    }
    return Object.freeze(entries);
  });

/** Canonical CIDR text ('203.0.113.0/24'); a bare IP becomes its /32 or /128. */
const trustedCidrs = z
  .string()
  .default("")
  .transform((text, ctx): readonly string[] => {
    const cidrs: string[] = [];
    for (const part of commaList(text)) {
      const entry = parseAllowEntry(part);
      if (entry?.kind === "cidr") cidrs.push(`${entry.range[0].toString()}/${entry.range[1]}`);
      else
        ctx.addIssue({
          code: "custom",
          message: `'${part}' is neither a CIDR range nor an IP address`,
        });
    }
    return Object.freeze(cidrs);
  });

export const SERVE_ROLES = ["api", "scheduler", "worker", "management"] as const;
export type ServeRole = (typeof SERVE_ROLES)[number];

const serveRoles = z
  .string()
  .default("api,scheduler,worker,management")
  .transform((text, ctx): readonly ServeRole[] => {
    const roles: ServeRole[] = [];
    for (const role of commaList(text)) {
      if ((SERVE_ROLES as readonly string[]).includes(role)) roles.push(role as ServeRole);
      else
        ctx.addIssue({
          code: "custom",
          message: `unknown role '${role}' (expected ${SERVE_ROLES.join(", ")})`,
        });
    }
    return Object.freeze(roles);
  });

/** A setting: the environment variable it is read from, and how its text is parsed (default included). */
const fromEnv = <const V extends string, S extends z.ZodType>(variable: V, schema: S) => ({
  variable,
  schema,
});

/**
 * Every setting, once: its name in Config, its variable, its parser and default. Config is what these
 * parse to (z.output), so a new setting is one line here.
 */
const SETTINGS = {
  databaseUrl: fromEnv(
    "DATABASE_URL",
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, "a postgres:// URL")
      .default(DEFAULT_DATABASE_URL),
  ),
  redisUrl: fromEnv(
    "REDIS_URL",
    z
      .string()
      .regex(/^rediss?:\/\//, "a redis:// URL")
      .default(DEFAULT_REDIS_URL),
  ),
  /** Where the crawl queues live: auto = Redis when REDIS_URL is set or a Redis answers on it, else PostgreSQL (README). */
  queueBackend: fromEnv("QUEUE_BACKEND", z.enum(["auto", "redis", "postgres"]).default("auto")),
  queuePrefix: fromEnv(
    "GSINDEX_QUEUE_PREFIX",
    z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ and -")
      .default("gsindex"),
  ),
  logLevel: fromEnv(
    "LOG_LEVEL",
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ),
  crawlIntervalMs: fromEnv("CRAWL_INTERVAL_MS", int(1000, 7 * 24 * 3600 * 1000).default(300_000)),
  /**
   * 1 (the default): the built-in `index` source queries every known server each QUERY_INTERVAL_MS and the
   * other sources only list, so a paced master's long listing does not stretch the query interval
   * (docs/crawler.md, "Cadence"); 0: each source's crawl queries what it lists.
   */
  queryFromIndex: fromEnv("QUERY_FROM_INDEX", bool.default(true)),
  /**
   * Interval of the index source's crawls (QUERY_FROM_INDEX): how often a known server is queried. Unset, it
   * is CRAWL_INTERVAL_MS, so that one setting still says how often a server is queried (loadConfig fills it).
   */
  queryIntervalMs: fromEnv("QUERY_INTERVAL_MS", int(1000, 7 * 24 * 3600 * 1000).optional()),
  /**
   * Query batch jobs a worker process holds at once. A job keeps its place until its slowest server is done
   * (a silent one costs the whole timeout), and waits for a free query slot before it sends anything
   * (limitInFlight), so this is a ceiling, not the pace: it must be large enough that the jobs past their
   * tails keep QUERY_CONCURRENCY busy (16 left the slots half idle: docs/BENCHMARKS-history.md, "Query slots").
   */
  workerConcurrency: fromEnv("WORKER_CONCURRENCY", int(1, 256).default(32)),
  queryConcurrency: fromEnv("QUERY_CONCURRENCY", int(1, 100_000).default(800)),
  /**
   * Servers per query batch job, each batch written in one transaction. 500 rather than 250: half the
   * statements per crawl, PostgreSQL's CPU per server 8-30 % lower and the 100,000-server index crawl 13-15 %
   * shorter, the jobs past their tails holding fewer of the slots (docs/BENCHMARKS-history.md, "Batches of
   * 500"). Memory follows WORKER_CONCURRENCY x this at worst: each held answer is encoded (answer-row.ts).
   */
  queryBatchSize: fromEnv("QUERY_BATCH_SIZE", int(1, 5000).default(500)),
  queryTimeoutMs: fromEnv("QUERY_TIMEOUT_MS", int(50, 60_000).default(1500)),
  queryRetries: fromEnv("QUERY_RETRIES", int(0, 10).default(1)),
  masterTimeoutMs: fromEnv("MASTER_TIMEOUT_MS", int(50, 120_000).default(5000)),
  jobAttempts: fromEnv("JOB_ATTEMPTS", int(1, 100).default(5)),
  /** How often workers look for jobs whose worker died; such jobs run again. */
  workerStalledIntervalMs: fromEnv(
    "WORKER_STALLED_INTERVAL_MS",
    int(100, 3_600_000).default(30_000),
  ),
  workerLockDurationMs: fromEnv("WORKER_LOCK_DURATION_MS", int(100, 3_600_000).default(30_000)),
  /** On SIGTERM, how long jobs in flight may finish before they are handed back to the queue. */
  stopGraceMs: fromEnv("STOP_GRACE_MS", int(0, 3_600_000).default(25_000)),
  /** Deadline for one listing run (one region of a master, one Steam Web API listing). */
  listTimeoutMs: fromEnv("LIST_TIMEOUT_MS", int(100, 24 * 3_600_000).default(600_000)),
  jobBackoffMs: fromEnv("JOB_BACKOFF_MS", int(0, 3_600_000).default(2000)),
  /** How long a crawl job waits for PostgreSQL or Redis to come back, without spending attempts, before it fails as usual. */
  jobOutageWaitMs: fromEnv("JOB_OUTAGE_WAIT_MS", int(0, 24 * 3_600_000).default(900_000)),
  offlineAfterFailures: fromEnv("OFFLINE_AFTER_FAILURES", int(1, 1000).default(3)),
  delistAfterMissedCrawls: fromEnv("DELIST_AFTER_MISSED_CRAWLS", int(1, 1000).default(3)),
  historyRawDays: fromEnv("HISTORY_RAW_DAYS", int(1, 366).default(7)),
  /** 0 keeps rollups forever. */
  historyRollupDays: fromEnv("HISTORY_ROLLUP_DAYS", int(0, 36_600).default(0)),
  /** More query ports than this on one IP marks its servers as suspected fakes (FARM_RULE_EXEMPT_RANGES exempt); 0 disables. */
  fakePortsPerIp: fromEnv("FAKE_PORTS_PER_IP", int(0, 65535).default(200)),
  /** CIDR ranges (or IPs) the farm rule never flags; ADDRESS_ALLOW_LIST exempts nothing from it. */
  farmRuleExemptRanges: fromEnv("FARM_RULE_EXEMPT_RANGES", trustedCidrs),
  // Inflated player counts (docs/fake-players.md); 0 switches a rule off.
  fakeInfoPlayersExcess: fromEnv("FAKE_INFO_PLAYERS_EXCESS", int(0, 65535).default(8)),
  fakeSameNamePlayers: fromEnv("FAKE_SAME_NAME_PLAYERS", int(0, 65535).default(5)),
  fakeZeroDurationPlayers: fromEnv("FAKE_ZERO_DURATION_PLAYERS", int(0, 65535).default(5)),
  fakeSharedNameServers: fromEnv("FAKE_SHARED_NAME_SERVERS", int(0, 1_000_000).default(3)),
  fakeSharedNamesPerServer: fromEnv("FAKE_SHARED_NAMES_PER_SERVER", int(0, 65535).default(5)),
  masterSources: fromEnv("MASTER_SOURCES", masterSources),
  addressAllowList: fromEnv("ADDRESS_ALLOW_LIST", addressAllowList),
  steamWebApiKey: fromEnv("STEAM_WEB_API_KEY", z.string().optional()),
  managementHost: fromEnv("MANAGEMENT_HOST", z.string().default("0.0.0.0")),
  managementPort: fromEnv("MANAGEMENT_PORT", int(1, 65535).default(51963)),
  // Issue 12 (safe on the open internet): the management port and every outbound contact.
  /** Relays (CIDR ranges or IPs) whose connections may register game servers at addresses other than their own. */
  managementTrustedCidrs: fromEnv("MANAGEMENT_TRUSTED_CIDRS", trustedCidrs),
  /** A management connection with no registered game server that completes no line for this long is closed; 0 never. */
  managementIdleTimeoutMs: fromEnv("MANAGEMENT_IDLE_TIMEOUT_MS", int(0, 3_600_000).default(30_000)),
  apiHost: fromEnv("API_HOST", z.string().default("0.0.0.0")),
  apiPort: fromEnv("API_PORT", int(0, 65535).default(4000)),
  apiKeys: fromEnv("GSINDEX_API_KEYS", z.string().default("").transform(commaList)),
  /** Comma-separated allowed origins, or '*' for any. */
  apiCorsOrigins: fromEnv("API_CORS_ORIGINS", z.string().default("*").transform(commaList)),
  /** Read requests per client per window; 0 disables the limit. */
  apiRateLimitMax: fromEnv("API_RATE_LIMIT", int(0, 1_000_000).default(600)),
  apiRateLimitWindowMs: fromEnv(
    "API_RATE_LIMIT_WINDOW_MS",
    int(1000, 24 * 3600 * 1000).default(60_000),
  ),
  /** Proxies in front of the API to trust for X-Forwarded-For (the client of the rate limit): 0 = none. */
  apiTrustProxyHops: fromEnv("API_TRUST_PROXY_HOPS", int(0, 10).default(0)),
  apiMaxPageSize: fromEnv("API_MAX_PAGE_SIZE", int(1, 10_000).default(100)),
  apiMaxDepth: fromEnv("API_MAX_DEPTH", int(2, 100).default(10)),
  apiMaxComplexity: fromEnv("API_MAX_COMPLEXITY", int(100, 100_000_000).default(50_000)),
  /** Longest range a RAW history query may ask for, in hours. */
  apiRawHistoryMaxHours: fromEnv("API_RAW_HISTORY_MAX_HOURS", int(1, 24 * 366).default(48)),
  // The API facing hostile clients (docs/graphql.md, "Limits"): checked before a request is parsed or run.
  /** Largest request body; a bigger one is refused with 413 before it is read. */
  apiMaxBodyBytes: fromEnv("API_MAX_BODY_BYTES", int(1024, 16 * 1024 * 1024).default(65_536)),
  /** Most lexical tokens in a query document (graphql-js stops parsing there). */
  apiMaxTokens: fromEnv("API_MAX_TOKENS", int(100, 1_000_000).default(2000)),
  /** Most field selections written in a query document, and most of them aliased. */
  apiMaxFields: fromEnv("API_MAX_FIELDS", int(10, 100_000).default(200)),
  apiMaxAliases: fromEnv("API_MAX_ALIASES", int(0, 100_000).default(30)),
  /** A read costs one unit of API_RATE_LIMIT per this much query complexity (rounded up, at least one). */
  apiRateLimitComplexityPerRead: fromEnv(
    "API_RATE_LIMIT_COMPLEXITY_PER_READ",
    int(1, 100_000_000).default(100),
  ),
  /** Failed authentications (a wrong API key) per client per window before every key it sends is refused; 0 disables. */
  apiAuthFailureLimit: fromEnv("API_AUTH_FAILURE_LIMIT", int(0, 1_000_000).default(10)),
  apiAuthFailureWindowMs: fromEnv(
    "API_AUTH_FAILURE_WINDOW_MS",
    int(1000, 24 * 3600 * 1000).default(900_000),
  ),
  /** Outside production only: internal errors carry their stack trace to the client, for debugging. */
  apiErrorStacks: fromEnv("API_ERROR_STACKS", bool.default(false)),
  /** NODE_ENV=production: stack traces never reach a client, whatever API_ERROR_STACKS says. */
  production: fromEnv(
    "NODE_ENV",
    z
      .string()
      .default("development")
      .transform((env) => env === "production"),
  ),
  roles: fromEnv("SERVE_ROLES", serveRoles),
  // The service's own V8 flags (src/service/v8-memory.ts): its memory follows these, not the machine's RAM.
  /** The heap may grow to (1 + this / 100) times what survived the last full GC; 0: V8's own (up to 4x). */
  heapGrowthPercent: fromEnv("HEAP_GROWTH_PERCENT", int(0, 1000).default(100)),
  /** 1: V8 also optimises WebAssembly (Prisma's query compiler) with TurboFan, ~50 MiB more RSS. */
  wasmOptimize: fromEnv("WASM_OPTIMIZE", bool.default(false)),
  migrateOnStart: fromEnv("MIGRATE_ON_START", bool.default(true)),
};

type Settings = typeof SETTINGS;
const configSchema = z.object(
  Object.fromEntries(Object.entries(SETTINGS).map(([key, setting]) => [key, setting.schema])) as {
    [K in keyof Settings]: Settings[K]["schema"];
  },
);

export type Config = Omit<z.output<typeof configSchema>, "queryIntervalMs"> & {
  queryIntervalMs: number;
};

/** The environment variables gsindex reads (docker-compose.yml may set only these). */
export const CONFIG_VARIABLES: readonly string[] = Object.values(SETTINGS).map(
  (setting) => setting.variable,
);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

const SECRET = new Set(["STEAM_WEB_API_KEY", "GSINDEX_API_KEYS", "DATABASE_URL", "REDIS_URL"]);

function shown(name: string, env: Record<string, string | undefined>): string {
  const value = env[name];
  if (value === undefined) return "";
  if (SECRET.has(name)) return " (value hidden)";
  return ` (got ${JSON.stringify(value.length > 80 ? value.slice(0, 80) + "…" : value)})`;
}

/** Parse and validate; throws ConfigError listing every bad variable. Empty strings count as unset. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): Readonly<Config> {
  const cleaned: Record<string, string> = {};
  const input: Record<string, string> = {};
  for (const [key, { variable }] of Object.entries(SETTINGS)) {
    const value = env[variable];
    if (value === undefined || value.trim() === "") continue;
    cleaned[variable] = value.trim();
    input[key] = value.trim();
  }
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const variable =
        SETTINGS[issue.path[0] as keyof Settings]?.variable ?? String(issue.path[0] ?? "?");
      const part = issue.path.length > 1 ? `[${issue.path.slice(1).join(".")}]` : "";
      // A setting's own checks (the custom issues) say what is wrong with which part; a plain bad value is quoted.
      return `${variable}${part}: ${issue.message}${issue.code === "custom" ? "" : shown(variable, cleaned)}`;
    });
    throw new ConfigError(problems);
  }
  const config: Config = {
    ...parsed.data,
    queryIntervalMs: parsed.data.queryIntervalMs ?? parsed.data.crawlIntervalMs,
  };
  if (config.apiErrorStacks && config.production)
    throw new ConfigError([
      "API_ERROR_STACKS: stack traces are never sent to clients in production (NODE_ENV=production)",
    ]);
  return Object.freeze(config);
}

/**
 * How often a known server is queried, so how far apart its samples are: the index source's interval with
 * QUERY_FROM_INDEX, else its source's crawl interval (CRAWL_INTERVAL_MS for the configured sources).
 */
export function sampleIntervalMs(
  config: Pick<Config, "queryFromIndex" | "queryIntervalMs" | "crawlIntervalMs">,
): number {
  return config.queryFromIndex ? config.queryIntervalMs : config.crawlIntervalMs;
}
