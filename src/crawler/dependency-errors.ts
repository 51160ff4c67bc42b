/**
 * Errors that say a dependency (PostgreSQL, Redis) is unreachable or restarting, as opposed to errors in
 * our work. A crawl job that meets one waits for the dependency (workers.ts) instead of spending one of
 * its attempts: an outage says nothing about the job.
 */

/** Socket-level codes of a connection that cannot be made or was cut. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);
/**
 * PostgreSQL SQLSTATEs of a server going away or not ready: class 08 (connection exception), 57P01-57P03
 * (admin / crash shutdown, cannot connect now). Prisma's P1001 (cannot reach), P1002 (timed out), P1017
 * (server closed the connection) and P2024 (no pool connection in time) say the same.
 */
const SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123])$/;
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
/** What the drivers say when they give no code (pg's "Connection terminated", ioredis' "Connection is closed."). */
const MESSAGES =
  /ECONNREFUSED|ECONNRESET|Connection terminated|connection terminated unexpectedly|Connection is closed|server closed the connection|Can't reach database server|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command|Timed out fetching a new connection|connect ETIMEDOUT/i;

function codesOf(err: object): unknown[] {
  const e = err as { code?: unknown; errno?: unknown; meta?: { code?: unknown }; cause?: unknown };
  return [e.code, e.meta?.code];
}

/** True when `err` (or any error in its cause chain / AggregateError list) means a dependency is unreachable. */
export function isDependencyDown(err: unknown, depth = 0): boolean {
  if (depth > 5 || err === null || typeof err !== "object") return false;
  for (const code of codesOf(err)) {
    if (typeof code !== "string") continue;
    if (SOCKET_CODES.has(code) || SQLSTATE.test(code) || PRISMA_CODES.has(code)) return true;
  }
  const message = (err as { message?: unknown }).message;
  if (typeof message === "string" && MESSAGES.test(message)) return true;
  const nested = [
    (err as { cause?: unknown }).cause,
    ...(Array.isArray((err as { errors?: unknown }).errors)
      ? (err as { errors: unknown[] }).errors
      : []),
  ];
  return nested.some((n) => isDependencyDown(n, depth + 1));
}
