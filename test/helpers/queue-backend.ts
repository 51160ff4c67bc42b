/**
 * Where the tests' queues live, and whether the tests about Redis itself can run. scripts/with-services.js
 * (how `npm test` runs jest) decides once: a Redis that answers gives QUEUE_BACKEND=redis and its
 * REDIS_URL (CI); a machine with no Redis gives QUEUE_BACKEND=postgres and no REDIS_URL. Then the tests
 * whose subject does not depend on the backend queue on PostgreSQL, in their own database, and the tests
 * about Redis skip, saying why. Jest run by hand, without the wrapper, uses the Redis on 127.0.0.1:6379.
 */
import { accessSync, constants as fsConstants } from "node:fs";
import path from "node:path";
import type { QueueStore } from "../../src/crawler/queues";

/** The shared Redis (every test uses key prefixes of its own), or null on a machine without one. */
export const testRedisUrl: string | null =
  process.env.QUEUE_BACKEND === "postgres"
    ? null
    : (process.env.REDIS_URL ?? "redis://127.0.0.1:6379");

/** The backend the tests that do not choose one queue on. */
export const testQueueBackend: "redis" | "postgres" = testRedisUrl === null ? "postgres" : "redis";

const NO_REDIS =
  "no Redis for the tests: QUEUE_BACKEND=postgres (scripts/with-services.js found no REDIS_URL and no Redis on 127.0.0.1:6379, or was told to)";

/**
 * The queues of a test whose subject does not depend on the backend: the shared Redis, or BullMQ's
 * PostgreSQL backend in `databaseUrl` (the test's own database).
 */
export function testQueueStore(databaseUrl: string): QueueStore {
  return testRedisUrl === null
    ? { backend: "postgres", databaseUrl }
    : { backend: "redis", redisUrl: testRedisUrl };
}

/** The same for a gsindex process (loadConfig or a child's environment): QUEUE_BACKEND and REDIS_URL. */
export function testQueueEnv(): { QUEUE_BACKEND: string; REDIS_URL?: string } {
  return testRedisUrl === null
    ? { QUEUE_BACKEND: "postgres" }
    : { QUEUE_BACKEND: "redis", REDIS_URL: testRedisUrl };
}

function skippedBlock(name: string, reason: string): void {
  // Printed as well: a skipped block's title shows only with --verbose.
  console.log(`skipped "${name}": ${reason}`);
  describe.skip(`${name} (skipped: ${reason})`, () => {
    it(reason, () => undefined);
  });
}

/** `describe` when the shared Redis is there (its URL to the body), else a skipped block that says why. */
export function describeWithRedis(name: string, body: (redisUrl: string) => void): void {
  if (testRedisUrl === null) skippedBlock(name, NO_REDIS);
  else describe(name, () => body(testRedisUrl as string));
}

/** `it` when the shared Redis is there, else `it.skip` whose title says why. */
export function itWithRedis(
  name: string,
  fn: (redisUrl: string) => Promise<void>,
  timeoutMs?: number,
): void {
  const url = testRedisUrl;
  if (url === null) {
    console.log(`skipped "${name}": ${NO_REDIS}`);
    it.skip(`${name} (skipped: ${NO_REDIS})`, () => undefined);
  } else it(name, () => fn(url), timeoutMs);
}

/** Whether a redis-server is on the PATH: the Redis fault tests start their own (src/shared/own-services.ts). */
export function redisServerOnPath(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.PATH ?? "").split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, "redis-server"), fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const NO_REDIS_SERVER =
  "no redis-server on the PATH to start one of the test's own (apt-get install redis-server)";

/** `describe` for a test that starts a redis-server of its own, else a skipped block that says why. */
export function describeWithRedisServer(name: string, body: () => void): void {
  if (redisServerOnPath()) describe(name, body);
  else skippedBlock(name, NO_REDIS_SERVER);
}

/** `it` likewise. */
export function itWithRedisServer(name: string, fn: () => Promise<void>, timeoutMs?: number): void {
  if (redisServerOnPath()) it(name, fn, timeoutMs);
  else {
    console.log(`skipped "${name}": ${NO_REDIS_SERVER}`);
    it.skip(`${name} (skipped: ${NO_REDIS_SERVER})`, () => undefined);
  }
}
