import { startDemo, type RunningDemo } from '../../src/demo/demo';
import { freePort } from '../../src/shared/free-port';
import { silentLogger } from '../../src/shared/logger';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { dropRedisPrefix } from '../helpers/redis';

const QUEUE_PREFIX = `demo-test-${process.pid}`;

async function graphql<T>(url: string, query: string): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  const body = (await response.json()) as { data?: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data as T;
}

async function eventually<T>(probe: () => Promise<T | null>, attempts = 120, everyMs = 500): Promise<T> {
  let last: unknown = null;
  for (let i = 0; i < attempts; i++) {
    const value = await probe().catch((err: unknown) => {
      last = err;
      return null;
    });
    if (value !== null) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`the demo never got there (last error: ${String(last)})`);
}

describe('gsindex demo', () => {
  let database: TestDatabase;
  let demo: RunningDemo;

  beforeAll(async () => {
    database = await createTestDatabase('gsindex_demo_test');
    demo = await startDemo({
      servers: 120,
      apiPort: 0, // the OS picks it: apiUrl must name the bound port
      managementPort: await freePort(),
      crawlIntervalMs: 2000,
      dayMs: 60_000,
      env: { DATABASE_URL: database.url, REDIS_URL: process.env.REDIS_URL, GSINDEX_QUEUE_PREFIX: QUEUE_PREFIX, LOG_LEVEL: 'silent' },
      logger: silentLogger,
      fleetHost: '127.0.0.91',
      fleetBasePort: 23000 + (process.pid % 1000) * 5,
    });
  }, 60_000);

  afterAll(async () => {
    await demo?.stop();
    await database?.drop();
    await dropRedisPrefix(QUEUE_PREFIX);
  }, 60_000);

  it('serves a populated index with history for every kind of source within a minute', async () => {
    expect(demo.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/graphql$/);
    // The web pages are served by the same process, at the URL the demo prints first.
    expect(demo.webUrl).toBe(demo.apiUrl.replace(/graphql$/, ''));
    const page = await fetch(demo.webUrl, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/web/app.js');
    type Count = { servers: { totalCount: number } };
    const online = (protocols: string[]): Promise<Count> =>
      graphql<Count>(demo.apiUrl, `{ servers(first: 1, filter: { statuses: [ONLINE], protocols: ${JSON.stringify(protocols)} }) { totalCount } }`);
    await eventually(async () => {
      const a2s = (await online(['source'])).servers.totalCount;
      if (a2s < 100) throw new Error(`${a2s} A2S servers online so far`);
      return a2s;
    });
    // registered with the management server (never queried), and the older protocols from the address lists
    await eventually(async () => ((await online(['bomberman'])).servers.totalCount > 0 ? true : null));
    const legacy = ['quake2', 'quake3', 'gamespy1', 'gamespy2', 'gamespy3', 'doom3', 'halflife', 'ase'];
    await eventually(async () => ((await online(legacy)).servers.totalCount > 0 ? true : null));

    type History = { servers: { edges: { node: { history: { points: { playersAvg: number }[] } } }[] } };
    const history = await graphql<History>(demo.apiUrl, '{ servers(first: 20, filter: { statuses: [ONLINE], protocols: ["source"] }) { edges { node { history(resolution: RAW) { points { playersAvg } } } } } }');
    expect(history.servers.edges.some((e) => e.node.history.points.length > 0)).toBe(true);
  }, 90_000);
});
