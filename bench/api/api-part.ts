/**
 * Part 5, API: the real API (`gsindex serve --role api`, Apollo over express, PostgreSQL) over the
 * database of part 4, loaded with autocannon: the servers list (a filter and a sort, page 1 and a deep
 * page), one server's 30-day history (a different server per request), and a game's 1-year population.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { freePort } from '../../src/shared/free-port';
import path from 'node:path';
import type { BenchOptions } from '../lib/args';
import { repoRoot, spawnNode, stopChild } from '../lib/child';
import { latestProfile, profileMarkdown, summariseProfile } from '../lib/profile';
import { mib, num, table, type PartResult, type Verdict } from '../lib/report';
import { ensureYearOfPopulation, storageDb } from '../storage/storage-part';
import { CpuMeter, cpuMsByName, peakRssBytes } from '../lib/procs';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
}
type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, result: AutocannonResult) => void) => { stop(): void };

interface Route {
  id: string;
  label: string;
  targetP99Ms: number;
  /** A body, or a function giving a new body per request. */
  body: () => string;
}

interface RouteResult {
  id: string;
  label: string;
  targetP99Ms: number;
  requestsPerSecond: number;
  total: number;
  /** One connection: the latency one client sees. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** `connections` at once: throughput (requestsPerSecond) and latency under load. */
  loadedP50Ms: number;
  loadedP99Ms: number;
  errors: number;
  non2xx: number;
  sample: string;
  /** CPU per request at one connection: the API process, and every PostgreSQL process. */
  apiCpuMsPerRequest: number;
  postgresCpuMsPerRequest: number;
}

async function graphql(url: string, query: string): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  return (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

async function waitReady(base: string, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    try {
      const res = await fetch(`${base}/readyz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the API did not become ready at ${base} within ${deadlineMs} ms`);
}

function load(url: string, route: Route, seconds: number, connections: number): Promise<AutocannonResult> {
  const autocannon = require('autocannon') as Autocannon;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        connections,
        duration: seconds,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [{ setupRequest: (req: AutocannonRequest) => ({ ...req, method: 'POST', body: route.body() }) }],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

const LIST_FIELDS = 'edges { cursor node { id name map players maxPlayers address queryPort } } pageInfo { endCursor hasNextPage }';

async function startApi(dbUrl: string, port: number, nodeArgs: string[]): Promise<ReturnType<typeof spawnNode>> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: dbUrl,
    API_HOST: '127.0.0.1',
    API_PORT: String(port),
    API_RATE_LIMIT: '0',
    LOG_LEVEL: 'warn',
    MIGRATE_ON_START: 'false',
    NODE_ENV: 'production',
    GSINDEX_QUEUE_PREFIX: `gsbench${process.pid}`,
  };
  const api = spawnNode(path.join(repoRoot(), 'bin', 'gsindex.js'), ['serve', '--role', 'api'], { env, nodeArgs });
  api.stdout?.resume();
  api.stderr?.resume();
  await waitReady(`http://127.0.0.1:${port}`, 60_000);
  return api;
}

export async function runApiPart(options: BenchOptions, outDir: string, log: (line: string) => void): Promise<PartResult> {
  const started = Date.now();
  const store = await storageDb(options, log);
  const extra = await ensureYearOfPopulation(store);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const url = `${base}/graphql`;
  log('api: starting gsindex serve --role api');
  let api = await startApi(store.db.url, port, []);
  const results: RouteResult[] = [];
  let apiPeakRss = NaN;
  let profile = '';
  try {
    // The filter and sort of the list: one game, not empty, most players first.
    const filter = '{ appId: 730, notEmpty: true }';
    const order = '{ field: PLAYERS, direction: DESC }';
    const countFirst = await graphql(url, `{ servers(filter: ${filter}, orderBy: ${order}, first: 100) { ${LIST_FIELDS} } }`);
    if (countFirst.errors) throw new Error(`servers query failed: ${JSON.stringify(countFirst.errors).slice(0, 500)}`);
    // A deep page: walk 100 pages of 100 with cursors (keyset paging), keep the cursor.
    let after: string | null = null;
    let depth = 0;
    for (let page = 0; page < 100; page++) {
      const r = await graphql(url, `{ servers(filter: ${filter}, orderBy: ${order}, first: 100${after ? `, after: ${JSON.stringify(after)}` : ''}) { pageInfo { endCursor hasNextPage } } }`);
      const info = (r.data?.servers as { pageInfo: { endCursor: string | null; hasNextPage: boolean } } | undefined)?.pageInfo;
      if (!info?.endCursor || !info.hasNextPage) break;
      after = info.endCursor;
      depth += 100;
    }
    const nowIso = new Date().toISOString();
    const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const yearAgo = new Date(Date.now() - 365 * 86_400_000).toISOString();
    const servers = store.servers;
    const routes: Route[] = [
      { id: 'list-1', label: `servers list, page 1 (filter appId 730 + notEmpty, sort PLAYERS DESC, 50 per page)`, targetP99Ms: 25, body: () => JSON.stringify({ query: `{ servers(filter: ${filter}, orderBy: ${order}, first: 50) { ${LIST_FIELDS} } }` }) },
      { id: 'list-deep', label: `servers list, deep page (same filter and sort, 50 rows after row ${num(depth)})`, targetP99Ms: 25, body: () => JSON.stringify({ query: `{ servers(filter: ${filter}, orderBy: ${order}, first: 50, after: ${JSON.stringify(after ?? '')}) { ${LIST_FIELDS} } }` }) },
      {
        id: 'history',
        label: "a server's 30-day history (AUTO resolution; a random server per request)",
        targetP99Ms: 25,
        body: () => JSON.stringify({ query: `{ server(id: ${1 + Math.floor(Math.random() * servers)}) { name history(from: "${monthAgo}", to: "${nowIso}") { resolution bucketSeconds points { at playersAvg playersMax onlineShare } } } }` }),
      },
      { id: 'population', label: "a game's 1-year population (appId 730, AUTO resolution)", targetP99Ms: 100, body: () => JSON.stringify({ query: `{ population(filter: { appId: 730 }, from: "${yearAgo}", to: "${nowIso}") { resolution bucketSeconds points { at serversOnline playersAvg playersPeak } } }` }) },
    ];
    for (const route of routes) {
      const check = await graphql(url, (JSON.parse(route.body()) as { query: string }).query);
      if (check.errors) throw new Error(`${route.id} failed: ${JSON.stringify(check.errors).slice(0, 500)}`);
      const sample = JSON.stringify(check.data).length;
      const pointsMatch = /"points":\[(.*?)\]/.exec(JSON.stringify(check.data));
      const points = pointsMatch ? (pointsMatch[1]?.match(/"at"/g) ?? []).length : null;
      log(`api: ${route.id} for ${options.apiSeconds} s with 1 connection, then ${options.apiSeconds} s with ${options.apiConnections}`);
      const apiMeter = new CpuMeter(() => (api.pid === undefined ? [] : [api.pid]));
      const pgMeter = new CpuMeter(() => cpuMsByName('postgres').pids);
      const one = await load(url, route, options.apiSeconds, 1);
      const apiCpuMs = apiMeter.usedMs();
      const pgCpuMs = pgMeter.usedMs();
      const r = await load(url, route, options.apiSeconds, options.apiConnections);
      results.push({
        id: route.id,
        label: route.label,
        targetP99Ms: route.targetP99Ms,
        requestsPerSecond: r.requests.average,
        total: r.requests.total + one.requests.total,
        p50Ms: one.latency.p50,
        p99Ms: one.latency.p99,
        maxMs: one.latency.max,
        loadedP50Ms: r.latency.p50,
        loadedP99Ms: r.latency.p99,
        errors: r.errors + r.timeouts + one.errors + one.timeouts,
        non2xx: r.non2xx + one.non2xx,
        sample: `${num(sample)} bytes of JSON${points !== null ? `, ${points} points` : ''}`,
        apiCpuMsPerRequest: apiCpuMs / Math.max(1, one.requests.total),
        postgresCpuMsPerRequest: pgCpuMs / Math.max(1, one.requests.total),
      });
      log(`api: ${route.id}: 1 connection p50 ${one.latency.p50} ms, p99 ${one.latency.p99} ms; ${options.apiConnections} connections ${num(r.requests.average)} req/s, p99 ${r.latency.p99} ms`);
    }
    apiPeakRss = peakRssBytes(api.pid as number);
    await stopChild(api);
    const missed = results.filter((r) => r.p99Ms >= r.targetP99Ms);
    const toProfile = missed.length > 0 ? missed : results.slice(0, 1);
    if (!options.noProfile) {
      const dir = path.join(outDir, 'prof-api');
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      api = await startApi(store.db.url, port, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      for (const r of toProfile) {
        const route = routes.find((x) => x.id === r.id) as Route;
        await load(url, route, Math.min(5, options.apiSeconds), options.apiConnections);
      }
      await stopChild(api);
      const file = latestProfile(dir);
      if (file) profile = profileMarkdown(summariseProfile(file), `the API process while serving ${toProfile.map((r) => r.id).join(', ')} again (a separate run, profiler on)`);
    }
  } finally {
    await stopChild(api);
  }
  const verdicts: Verdict[] = results.map((r) => ({
    what: `API p99: ${r.label}`,
    target: `< ${r.targetP99Ms} ms`,
    measured: `${num(r.p99Ms)} ms (p50 ${num(r.p50Ms)} ms; ${num(r.requestsPerSecond)} req/s at ${options.apiConnections} connections)`,
    met: r.p99Ms < r.targetP99Ms && r.errors === 0 && r.non2xx === 0,
    gap: `${num(r.p99Ms / r.targetP99Ms, 1)}x the target`,
  }));
  const why = results.length === 0 ? '' :
    `What limits it: with one connection a request's time is the API process's CPU plus PostgreSQL's (columns above) plus waiting for a core the other work on the machine holds (p99 against p50). ` +
    `The API process spends ${results.map((r) => `${num(r.apiCpuMsPerRequest, 1)} ms`).join(', ')} of CPU per request and PostgreSQL ${results.map((r) => `${num(r.postgresCpuMsPerRequest, 1)} ms`).join(', ')} (same order as the table): ` +
    (results.filter((r) => r.apiCpuMsPerRequest > r.postgresCpuMsPerRequest).length * 2 > results.length
      ? "the Node side dominates; its profile below says where (Prisma's client runtime, garbage collection, GraphQL/Apollo execution and serialisation against the SQL drivers)."
      : 'PostgreSQL dominates for most queries: the SQL plans, not the Node side, set these figures.');
  const markdown = [
    `The API is the service itself (\`gsindex serve --role api\`, NODE_ENV=production, rate limit off) over the database generated by the storage part (${num(store.servers)} servers, ${store.days} days of history, plus ${num(extra)} daily population buckets for the ${365 - store.days} days before it so a 1-year chart has a year of points). ` +
      `autocannon runs in the bench process and POSTs GraphQL to /graphql, for ${options.apiSeconds} s per query with one connection (the latency one client sees: the p50/p99 the targets are checked against) and then ${options.apiSeconds} s with ${options.apiConnections} connections (throughput, and latency when requests queue on the 2 cores). Each query was checked once for errors first.`,
    '',
    table(
      ['query', 'p50 (1 conn.)', 'p99 (1 conn.)', 'target p99', 'CPU per request: API / PostgreSQL', `req/s (${options.apiConnections} conn.)`, `p50 / p99 (${options.apiConnections} conn.)`, 'errors / non-2xx', 'answer'],
      results.map((r) => [r.label, `${num(r.p50Ms)} ms`, `**${num(r.p99Ms)} ms**`, `< ${r.targetP99Ms} ms`, `${num(r.apiCpuMsPerRequest, 1)} / ${num(r.postgresCpuMsPerRequest, 1)} ms`, `**${num(r.requestsPerSecond)}**`, `${num(r.loadedP50Ms)} / ${num(r.loadedP99Ms)} ms`, `${r.errors} / ${r.non2xx}`, r.sample]),
    ),
    '',
    ...verdicts.map((v) => `Target: ${v.what} ${v.target}: **${v.measured}**, ${v.met ? 'met' : 'missed'}.`),
    '',
    why,
    '',
    `API process peak RSS: ${mib(apiPeakRss)}. The load generator shares the 2 cores with the API and PostgreSQL, so req/s is a floor.`,
    ...(profile ? ['', profile] : []),
  ].join('\n');
  return { id: 'api', title: 'API', markdown, commands: [`npm run bench -- --only storage,api --storage-servers ${store.servers} --api-seconds ${options.apiSeconds}`], verdicts, data: results, wallMs: Date.now() - started };
}
