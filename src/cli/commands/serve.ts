/**
 * `gsindex serve [--role api|scheduler|worker|management ...]`: the long-running service (src/service).
 * By default every role runs in this one process (SERVE_ROLES); run roles in separate processes, on many
 * machines sharing one Redis and one PostgreSQL, to scale out (workers, typically).
 * SIGTERM / SIGINT: the API drains and the workers finish their jobs (or hand them back to the queue)
 * within STOP_GRACE_MS, then the scheduler, management server, queues and database close; the process
 * exits within the grace period plus about 2 s whatever still hangs.
 */
import { startService } from "../../service/service";
import { loadConfig, SERVE_ROLES, type ServeRole } from "../../shared/config";
import { createLogger } from "../../shared/logger";
import { useConnectionLogger } from "../../shared/redis-health";
import { checkConfiguredServices, resolveQueueBackend, ServiceError } from "../../shared/services";
import { defineCommand } from "../define-command";
import { waitForStopSignal } from "../stop-signal";
import { processIo, type CommandIo } from "./io";

const command = defineCommand({
  name: "serve",
  usage: `usage: gsindex serve [--role ${SERVE_ROLES.join("|")}]...

Runs the API, the crawl scheduler, the crawl workers and the management server (default: all of them,
or SERVE_ROLES). Repeat --role (or give a comma list) to run only some.`,
  options: { role: { type: "string", multiple: true } },
});

/** Past STOP_GRACE_MS, how long the stop may still take before the process exits regardless. */
const STOP_WATCHDOG_EXTRA_MS = 1800;

/**
 * With no MASTER_SOURCES at all, `gsindex serve` indexes what a user expects: Valve's master server,
 * and the Steam Web API when a key is set. Only the command line gets this default: tests and the demo
 * always say which sources they crawl.
 */
export function defaultMasterSources(env: Record<string, string | undefined>): string {
  const sources: object[] = [
    { name: "valve-master", kind: "VALVE_UDP", host: "hl2master.steampowered.com", port: 27011 },
  ];
  if (env.STEAM_WEB_API_KEY)
    sources.push({ name: "steam-web-api", kind: "STEAM_WEB_API", host: "api.steampowered.com" });
  return JSON.stringify(sources);
}

export async function run(argv: string[], io: CommandIo = processIo): Promise<number> {
  const args = command.parse(argv, io);
  if (typeof args === "number") return args;
  const loaded = loadConfig({ MASTER_SOURCES: defaultMasterSources(process.env), ...process.env });
  // QUEUE_BACKEND=auto decided once here: a REDIS_URL that is set must answer (checked below).
  const config = {
    ...loaded,
    queueBackend: await resolveQueueBackend(
      loaded.queueBackend,
      loaded.redisUrl,
      process.env.REDIS_URL !== undefined,
    ),
  };
  let roles: ServeRole[] = [...config.roles];
  if (args.values.role) {
    roles = [];
    for (const r of args.values.role.flatMap((v) => v.split(",")).map((v) => v.trim())) {
      if (!(SERVE_ROLES as readonly string[]).includes(r)) {
        io.stderr.write(
          `gsindex serve: unknown role '${r}' (expected ${SERVE_ROLES.join(", ")})\n`,
        );
        return 2;
      }
      roles.push(r as ServeRole);
    }
  }
  const logger = createLogger(config.logLevel, "gsindex");
  useConnectionLogger(logger);
  try {
    const needsRedis = config.queueBackend === "redis" && roles.some((r) => r !== "management");
    await checkConfiguredServices(
      { databaseUrl: config.databaseUrl, ...(needsRedis ? { redisUrl: config.redisUrl } : {}) },
      { info: (line) => logger.info(line) },
    );
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    logger.fatal({ variable: err.variable }, err.message);
    return 1;
  }
  const service = await startService(config, roles, logger);
  logger.info({ roles }, "gsindex serving");
  const signal = await waitForStopSignal({
    onRepeat: (received) => {
      logger.warn({ signal: received }, "second signal: exiting now");
      process.exit(1);
    },
  });
  logger.info({ signal, graceMs: config.stopGraceMs }, "stopping");
  // Whatever still holds the event loop after the stop (a query socket of an aborted job, a connection
  // that never closed) must not keep the process past its grace period: an orchestrator kills it then.
  const watchdog = setTimeout(() => {
    logger.error({ graceMs: config.stopGraceMs }, "stop did not finish in time: exiting");
    process.exit(1);
  }, config.stopGraceMs + STOP_WATCHDOG_EXTRA_MS);
  watchdog.unref();
  await service.stop();
  logger.info("stopped");
  // Exit now rather than when the last handle lets go (a handed-back job's sockets may linger).
  setImmediate(() => process.exit(0));
  return 0;
}
