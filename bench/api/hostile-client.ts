/**
 * By hand, not part of `npm run bench`: how long one hostile client stalls the API's event loop (issue 12,
 * item 8). Starts `gsindex serve --role api` (production mode) over a fresh database, then per round
 * sends 8 copies of a hostile query in parallel while this process polls /healthz every 10 ms, and
 * prints the API process's CPU time for the round (robust on a loaded machine; /proc, 10 ms ticks, the
 * /healthz polls included), the round's wall time, the slowest /healthz answer and the statuses:
 *   limited   - the query (11,000 repeated fields, 220 KB) from a client already over API_RATE_LIMIT
 *   oversized - the same from a client within its limit (the token cap refuses it)
 *   worst     - the costliest document the default limits let through to validation (fields of one
 *               name with differing arguments: graphql-js compares them pairwise)
 * Run: npm run build && npx tsc -p tsconfig.bench.json && node dist-bench/bench/api/hostile-client.js
 */
import { freePort } from "../../src/shared/free-port";
import { deleteRedisPrefix } from "../../src/shared/redis-prefix";
import { createBenchDb } from "../lib/bench-db";
import { spawnService, stopChild } from "../lib/child";
import { cpuMsOf } from "../lib/procs";

// About the 250 KB of 11,000 repeated fields: graphql-js compares fields of one name pairwise.
const HOSTILE = `{ sources { ${Array.from({ length: 11_000 }, () => "crawls(first:5){id}").join(" ")} } }`;
const WORST = `{ sources { ${Array.from({ length: 99 }, (_, i) => `crawls(first: ${i + 1}) { id }`).join(" ")} } }`;

async function waitReady(base: string): Promise<void> {
  for (let k = 0; k < 300; k++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the API did not become ready at ${base}`);
}

async function post(url: string, query: string, clientIp: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": clientIp },
    body: JSON.stringify({ query }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function round(
  base: string,
  apiPid: number,
  label: string,
  query: string,
  clientOf: (i: number) => string,
): Promise<void> {
  const cpuBefore = cpuMsOf([apiPid]);
  let polling = true;
  let slowestMs = 0;
  const poller = (async () => {
    while (polling) {
      const t = performance.now();
      await (await fetch(`${base}/healthz`)).arrayBuffer();
      slowestMs = Math.max(slowestMs, performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: 8 }, (_, i) => post(`${base}/graphql`, query, clientOf(i))),
  );
  const wallMs = performance.now() - started;
  polling = false;
  await poller;
  const cpuMs = cpuMsOf([apiPid]) - cpuBefore;
  console.log(
    `${label.padEnd(10)} ${query.length} bytes x8: statuses ${[...new Set(statuses)].join(",")}, API CPU ${cpuMs.toFixed(0)} ms, wall ${wallMs.toFixed(0)} ms, slowest /healthz ${slowestMs.toFixed(0)} ms`,
  );
}

async function main(): Promise<void> {
  const db = await createBenchDb("hostile");
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    API_HOST: "127.0.0.1",
    API_PORT: String(port),
    API_RATE_LIMIT: "2",
    API_TRUST_PROXY_HOPS: "1", // each round is its own client
    API_MAX_BODY_BYTES: String(1024 * 1024), // so the body cap is not what refuses the 11,000 fields
    LOG_LEVEL: "warn",
    MIGRATE_ON_START: "false",
    NODE_ENV: "production",
    GSINDEX_QUEUE_PREFIX: `gsbenchhostile${process.pid}`,
  };
  const api = spawnService(["serve", "--role", "api"], { env });
  api.stdout?.resume();
  api.stderr?.resume();
  try {
    await waitReady(base);
    for (let k = 0; k < 3; k++)
      await post(`${base}/graphql`, "{ sources { name } }", "198.51.100.1");
    await round(base, api.pid ?? 0, "limited", HOSTILE, () => "198.51.100.1");
    // The other rounds: 8 clients within their limit (API_RATE_LIMIT=2), one address each.
    await round(base, api.pid ?? 0, "oversized", HOSTILE, (i) => `198.51.100.${10 + i}`);
    await round(base, api.pid ?? 0, "worst", WORST, (i) => `198.51.100.${20 + i}`);
  } finally {
    await stopChild(api);
    await db.drop();
    await deleteRedisPrefix(
      process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      env.GSINDEX_QUEUE_PREFIX ?? "",
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
