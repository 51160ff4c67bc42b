/**
 * Connection errors of every ioredis connection of the process, through the JSON logger: one line when
 * Redis becomes unreachable and one when it answers again, however many connections retry meanwhile
 * (a process holds several: queues, workers, BullMQ's blocking duplicates, the API's). Without an
 * 'error' listener ioredis prints `[ioredis] Unhandled error event` stack traces on every retry.
 */
import type IORedis from "ioredis";
import { silentLogger, type Logger } from "./logger";
import { redactUrl } from "./redact-url";

let sink: Logger = silentLogger;

/** Where connection health goes from now on (the service's logger; tests leave it silent). */
export function useConnectionLogger(logger: Logger): void {
  sink = logger;
}

export function connectionLogger(): Logger {
  return sink;
}

interface Outage {
  sinceMs: number;
  errors: number;
}

/** Per Redis server (redacted URL): the outage in progress, if any. */
const outages = new Map<string, Outage>();

export function isRedisDown(target: string): boolean {
  return outages.has(target);
}

/** Attaches the listeners; returns the connection. Safe to call on duplicates (BullMQ's blocking connections). */
export function watchRedis<T extends IORedis>(connection: T, url: string): T {
  const target = redactUrl(url);
  connection.on("error", (err: Error & { code?: string }) => {
    const outage = outages.get(target);
    if (outage) {
      outage.errors += 1;
      return;
    }
    outages.set(target, { sinceMs: Date.now(), errors: 1 });
    sink.warn({ redis: target, err: err.message, code: err.code }, "Redis unreachable");
  });
  connection.on("ready", () => {
    const outage = outages.get(target);
    if (!outage) return;
    outages.delete(target);
    sink.info(
      { redis: target, downMs: Date.now() - outage.sinceMs, errors: outage.errors },
      "Redis reachable again",
    );
  });
  return connection;
}

/**
 * QUIT, but never waits longer than `timeoutMs` (QUIT waits for Redis to answer, forever while it is
 * stopped or down): then the socket is just closed.
 */
export async function closeRedis(connection: IORedis, timeoutMs = 500): Promise<void> {
  if (connection.status === "end") return;
  let timer: NodeJS.Timeout | undefined;
  const quit = connection.quit().then(
    () => true,
    () => false,
  );
  const timedOut = new Promise<false>(
    (resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)),
  );
  const clean = await Promise.race([quit, timedOut]);
  clearTimeout(timer);
  if (!clean) connection.disconnect();
}

// The last three: PostgreSQL closing its connections (shutdown, crash recovery), seen by the queues on PostgreSQL.
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01",
  "57P02",
  "57P03",
]);

/**
 * A lost or refused connection of the queue store (for Redis, the outage watchRedis already reports), as
 * opposed to a real fault.
 */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  return /Connection is closed|ECONNREFUSED|ECONNRESET|Stream isn't writeable|Connection closed|Connection terminated/i.test(
    err.message,
  );
}

/**
 * For the 'error' event of a BullMQ Queue or Worker: connection errors are left to watchRedis (one
 * line per outage), anything else is logged. Without a listener BullMQ prints the error to the console.
 */
export function onBullError(logger: Logger, component: string): (err: Error) => void {
  return (err) => {
    if (!isConnectionError(err))
      logger.error({ component, err: err.message }, `${component} error`);
  };
}
