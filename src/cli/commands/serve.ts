/**
 * `gsindex serve [--role api|scheduler|worker|management ...]`: the long-running service. By default
 * every role runs in this one process (SERVE_ROLES); run roles in separate processes, on many
 * machines sharing one Redis and one PostgreSQL, to scale out (workers, typically).
 * SIGTERM / SIGINT: the API drains and the workers finish their jobs (or hand them back to the queue)
 * within STOP_GRACE_MS, then the scheduler, management server, queues and database close; the process
 * exits within the grace period plus about 2 s whatever still hangs.
 */
import { parseArgs } from 'node:util';
import { enqueueCrawl, enqueueServerQuery, createCrawlQueues, createRedis, createQueueSink, removeSourceJobs, type CancelledSource, type CrawlQueues, type QueueStore } from '../../crawler/queues';
import { countOutcomes } from '../../crawler/counting-querier';
import { buildCrawlDeps, createDefaultQuerier } from '../../crawler/runtime';
import { startScheduler, upsertConfiguredSources } from '../../crawler/scheduler';
import { startWorkers } from '../../crawler/workers';
import type { CrawlEvent } from '../../crawler/crawl-jobs';
import type { Express } from 'express';
import { ManagementServer } from '../../management/management-server';
import { migrate } from '../../migrate';
import { loadConfig, SERVE_ROLES, type Config, type ServeRole } from '../../shared/config';
import { createDb, type Db } from '../../shared/db';
import { createLogger, type Logger } from '../../shared/logger';
import { Metrics } from '../../shared/metrics';
import { useConnectionLogger } from '../../shared/redis-health';
import { checkConfiguredServices, resolveQueueBackend, ServiceError } from '../../shared/services';
import { processIo, type CommandIo } from './io';

const USAGE = `usage: gsindex serve [--role ${SERVE_ROLES.join('|')}]...

Runs the API, the crawl scheduler, the crawl workers and the management server (default: all of them,
or SERVE_ROLES). Repeat --role (or give a comma list) to run only some.`;

interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

type StartApi = (deps: Record<string, unknown>) => Promise<{ url?: string; close(): Promise<void> }>;

/** Crawl metrics from the crawl's own events: addresses listed per source, wall time of finished crawls. */
function crawlMetricsRecorder(db: Db, metrics: Metrics): (event: CrawlEvent) => void {
  const lookup = (crawlId: number) =>
    db.crawl.findUnique({ where: { id: crawlId }, select: { startedAt: true, finishedAt: true, source: { select: { name: true } } } });
  return (event) => {
    if (event.type === 'batch') return;
    if (event.type === 'skipped') {
      metrics.crawlTicksSkipped.inc({ source: event.sourceName });
      return;
    }
    // A metric is never worth failing a crawl over: lookups that fail are skipped.
    lookup(event.crawlId)
      .then((crawl) => {
        if (!crawl) return;
        if (event.type === 'listed') metrics.serversListed.inc({ source: crawl.source.name }, event.found);
        else if (crawl.finishedAt) metrics.crawlDuration.observe({ source: crawl.source.name }, (crawl.finishedAt.getTime() - crawl.startedAt.getTime()) / 1000);
      })
      .catch(() => undefined);
  };
}

/** The operator's routes (/metrics, the queue dashboard): loaded with the API only. */
function operatorRoutes(config: Config, metrics: Metrics, queues: CrawlQueues | null): (app: Express) => void {
  const { createApiKeyChecker } = require('../../graphql/auth') as typeof import('../../graphql/auth');
  const { mountOperatorRoutes } = require('../../graphql/dashboard') as typeof import('../../graphql/dashboard');
  const checkApiKey = createApiKeyChecker(config.apiKeys);
  if (queues) for (const queue of [queues.crawl, queues.query]) metrics.watchQueue(queue);
  return (app) =>
    mountOperatorRoutes(app, {
      renderMetrics: () => metrics.render(),
      queues: queues ? [queues.crawl, queues.query] : [],
      isAuthorized: (authorization) => checkApiKey(authorization) === 'valid',
    });
}

/**
 * With no MASTER_SOURCES at all, `gsindex serve` indexes what a user expects: Valve's master server,
 * and the Steam Web API when a key is set (the source that works today; SPEC.md). Only the command
 * line gets this default: tests and the demo always say which sources they crawl.
 */
export function defaultMasterSources(env: Record<string, string | undefined>): string {
  const sources: object[] = [{ name: 'valve-master', kind: 'VALVE_UDP', host: 'hl2master.steampowered.com', port: 27011 }];
  if (env.STEAM_WEB_API_KEY) sources.push({ name: 'steam-web-api', kind: 'STEAM_WEB_API', host: 'api.steampowered.com' });
  return JSON.stringify(sources);
}

/** The API lives in src/graphql/server.ts (startApi); loaded lazily so other roles never pay for it. */
function loadStartApi(): StartApi | null {
  try {
    const mod = require('../../graphql/server') as { startApi?: StartApi };
    return typeof mod.startApi === 'function' ? mod.startApi : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return null;
    throw err;
  }
}

function waitForStop(): Promise<string> {
  return new Promise((resolve) => {
    const on = (signal: string) => () => resolve(signal);
    process.once('SIGTERM', on('SIGTERM'));
    process.once('SIGINT', on('SIGINT'));
  });
}

/** Names the registration source of this process's own management server, so the crawl samples it. */
async function ensureLocalManagementSource(db: Db, config: Config): Promise<void> {
  const host = config.managementHost === '0.0.0.0' || config.managementHost === '::' ? '127.0.0.1' : config.managementHost;
  const data = { kind: 'MANAGEMENT' as const, host, port: config.managementPort, intervalMs: Math.min(config.crawlIntervalMs, 60_000) };
  await db.masterSource.upsert({ where: { name: 'local-management' }, create: { name: 'local-management', ...data }, update: data });
}

/** A started `gsindex serve`: `apiUrl` is where the API listens (the bound port, so API_PORT=0 works), when it does. */
export interface RunningServe {
  apiUrl: string | null;
  stop(): Promise<void>;
}

export async function startServe(config: Config, roles: readonly ServeRole[], logger: Logger): Promise<RunningServe> {
  if (config.migrateOnStart) await migrate(config.databaseUrl, { log: (line) => logger.info(line) });
  const db = createDb(config.databaseUrl);
  const metrics = new Metrics();
  const started: Stoppable[] = [];
  let apiUrl: string | null = null;
  let queues: CrawlQueues | null = null;
  const needQueues = roles.some((r) => r === 'scheduler' || r === 'worker' || r === 'api');
  const store: QueueStore =
    (await resolveQueueBackend(config.queueBackend, config.redisUrl, false)) === 'postgres' ? { backend: 'postgres', databaseUrl: config.databaseUrl } : { redisUrl: config.redisUrl };
  if (needQueues) logger.info({ queueBackend: store.backend ?? 'redis' }, 'queues');
  if (needQueues) queues = createCrawlQueues({ ...store, prefix: config.queuePrefix, jobAttempts: config.jobAttempts, jobBackoffMs: config.jobBackoffMs });

  try {
    if (roles.includes('management')) {
      const management = await ManagementServer.start({
        host: config.managementHost,
        port: config.managementPort,
        trustedCidrs: config.managementTrustedCidrs,
        idleTimeoutMs: config.managementIdleTimeoutMs,
        logger: logger.child({ role: 'management' }),
      });
      await ensureLocalManagementSource(db, config);
      started.push({ name: 'management', stop: () => management.close() });
    }
    if (roles.includes('scheduler') && queues) {
      await upsertConfiguredSources(db, config.masterSources, config.crawlIntervalMs);
      const scheduler = await startScheduler(db, queues, logger.child({ role: 'scheduler' }));
      started.push({ name: 'scheduler', stop: () => scheduler.stop() });
    }
    if (roles.includes('worker') && queues) {
      const deps = buildCrawlDeps({
        config,
        db,
        logger: logger.child({ role: 'worker' }),
        sink: createQueueSink(queues),
        querier: countOutcomes(createDefaultQuerier(config), metrics.queryOutcomes),
        onEvent: crawlMetricsRecorder(db, metrics),
      });
      const workers = startWorkers(
        deps,
        {
          ...store,
          prefix: config.queuePrefix,
          concurrency: config.workerConcurrency,
          stalledIntervalMs: config.workerStalledIntervalMs,
          lockDurationMs: config.workerLockDurationMs,
          historyRawDays: config.historyRawDays,
          historyRollupDays: config.historyRollupDays,
          graceMs: config.stopGraceMs,
          outageWaitMs: config.jobOutageWaitMs,
        },
        logger.child({ role: 'worker' }),
      );
      started.push({ name: 'worker', stop: () => workers.stop() });
      logger.info({ concurrency: config.workerConcurrency }, 'workers started');
    }
    if (roles.includes('api')) {
      const startApi = loadStartApi();
      if (!startApi) {
        logger.warn('api role: src/graphql/server.ts (startApi) is not part of this build; the API is not served');
      } else {
        const redis = store.backend === 'postgres' ? undefined : createRedis(config.redisUrl);
        const q = queues;
        const api = await startApi({
          apiLatency: metrics.apiLatency,
          mountRoutes: operatorRoutes(config, metrics, q),
          prisma: db,
          redis,
          rateLimitInPostgres: store.backend === 'postgres',
          config,
          logger: logger.child({ role: 'api' }),
          enqueue: q
            ? {
                crawl: async (sourceId: number) => void (await enqueueCrawl(q, sourceId)),
                query: async (serverId: number) => void (await enqueueServerQuery(q, serverId)),
                cancelSource: async (source: CancelledSource) => void (await removeSourceJobs(q, source)),
              }
            : {},
        });
        started.push({
          name: 'api',
          stop: async () => {
            await api.close();
            await redis?.quit().catch(() => undefined);
          },
        });
        apiUrl = api.url ?? null;
        logger.info({ url: api.url }, 'API listening');
      }
    }
  } catch (err) {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    await queues?.close();
    await db.$disconnect();
    throw err;
  }

  return {
    apiUrl,
    async stop() {
      // Within STOP_GRACE_MS (plus a little for the hand-back): the API drains its requests while the
      // workers finish or hand back their jobs; each later step is bounded, as Redis or PostgreSQL may
      // be the reason for the stop and not answer at all.
      const byName = new Map(started.map((s) => [s.name, s]));
      const stopRole = async (s: Stoppable | undefined, boundMs: number): Promise<void> => {
        if (!s) return;
        const outcome = await within(
          s.stop().then(
            () => 'stopped',
            (err: unknown) => err,
          ),
          boundMs,
        );
        if (outcome === undefined) logger.warn({ role: s.name, boundMs }, 'stop took too long: left behind');
        else if (outcome !== 'stopped') logger.error({ role: s.name, err: outcome instanceof Error ? outcome.message : String(outcome) }, 'stop failed');
      };
      await Promise.all([stopRole(byName.get('api'), config.stopGraceMs), stopRole(byName.get('worker'), config.stopGraceMs + STOP_STEP_MS * 2)]);
      for (const name of ['scheduler', 'management']) await stopRole(byName.get(name), STOP_STEP_MS);
      await within(queues?.close() ?? Promise.resolve(), STOP_STEP_MS);
      await within(db.$disconnect(), STOP_STEP_MS);
    },
  };
}

/** How long one stop step after the grace period may take (closing queues, the database pool). */
const STOP_STEP_MS = 500;

function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]).finally(() => clearTimeout(timer));
}

export async function run(argv: string[], io: CommandIo = processIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { role: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (err) {
    io.err(`gsindex serve: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE + '\n');
    return 0;
  }
  const loaded = loadConfig({ MASTER_SOURCES: defaultMasterSources(process.env), ...process.env });
  // QUEUE_BACKEND=auto decided once here: a REDIS_URL that is set must answer (checked below).
  const config = { ...loaded, queueBackend: await resolveQueueBackend(loaded.queueBackend, loaded.redisUrl, process.env.REDIS_URL !== undefined) };
  let roles: ServeRole[] = [...config.roles];
  if (values.role) {
    roles = [];
    for (const r of values.role.flatMap((v) => v.split(',')).map((v) => v.trim())) {
      if (!(SERVE_ROLES as readonly string[]).includes(r)) {
        io.err(`gsindex serve: unknown role '${r}' (expected ${SERVE_ROLES.join(', ')})\n`);
        return 2;
      }
      roles.push(r as ServeRole);
    }
  }
  const logger = createLogger(config.logLevel, 'gsindex');
  useConnectionLogger(logger);
  try {
    const needsRedis = config.queueBackend === 'redis' && roles.some((r) => r !== 'management');
    await checkConfiguredServices({ databaseUrl: config.databaseUrl, ...(needsRedis ? { redisUrl: config.redisUrl } : {}) }, { info: (line) => logger.info(line) });
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    logger.fatal({ variable: err.variable }, err.message);
    return 1;
  }
  const service = await startServe(config, roles, logger);
  logger.info({ roles }, 'gsindex serving');
  const signal = await waitForStop();
  logger.info({ signal, graceMs: config.stopGraceMs }, 'stopping');
  // Whatever still holds the event loop after the stop (a query socket of an aborted job, a connection
  // that never closed) must not keep the process past its grace period: an orchestrator kills it then.
  const watchdog = setTimeout(() => {
    logger.error({ graceMs: config.stopGraceMs }, 'stop did not finish in time: exiting');
    process.exit(1);
  }, config.stopGraceMs + STOP_WATCHDOG_EXTRA_MS);
  watchdog.unref();
  const stoppingSinceMs = Date.now();
  const exitOnSecondSignal = (): void => {
    void waitForStop().then((again) => {
      // The same stop request often arrives twice at once: a terminal's Ctrl-C goes to the whole process
      // group, and npm and scripts/with-services.js forward it again. Only a later one means "now".
      if (Date.now() - stoppingSinceMs < REPEATED_SIGNAL_MS) return exitOnSecondSignal();
      logger.warn({ signal: again }, 'second signal: exiting now');
      process.exit(1);
    });
  };
  exitOnSecondSignal();
  await service.stop();
  logger.info('stopped');
  // Exit now rather than when the last handle lets go (a handed-back job's sockets may linger).
  setImmediate(() => process.exit(0));
  return 0;
}

/** Past STOP_GRACE_MS, how long the stop may still take before the process exits regardless. */
const STOP_WATCHDOG_EXTRA_MS = 1800;
/** A signal this soon after the first is the same stop request delivered again, not a second one. */
const REPEATED_SIGNAL_MS = 1000;
