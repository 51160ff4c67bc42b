/**
 * The environment of a `gsindex serve` process a bench part starts: its own database and queue prefix, one
 * simulated Valve master as its only source, the loopback fleet allowed, migrations already applied. Each part
 * adds the source's options and the settings it measures.
 */
export interface BenchMasterSource {
  name: string;
  host: string;
  port: number;
  [option: string]: unknown;
}

export function crawlerEnv(
  input: {
    databaseUrl: string;
    redisUrl: string;
    prefix: string;
    master: BenchMasterSource;
    logLevel?: string;
  },
  settings: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: input.databaseUrl,
    REDIS_URL: input.redisUrl,
    GSINDEX_QUEUE_PREFIX: input.prefix,
    MASTER_SOURCES: JSON.stringify([{ kind: "VALVE_UDP", ...input.master }]),
    ADDRESS_ALLOW_LIST: "127.0.0.0/8",
    LOG_LEVEL: input.logLevel ?? "warn",
    MIGRATE_ON_START: "false",
    // The parts measure a crawl that lists, then queries what it listed; the cadence part sets 1.
    QUERY_FROM_INDEX: "0",
    ...settings,
  };
}
