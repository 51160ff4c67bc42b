import { startDemo, type RunningDemo } from "../../src/demo/demo";
import { freePort } from "../../src/shared/free-port";
import { silentLogger } from "../../src/shared/logger";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { testQueueEnv } from "../helpers/queue-backend";
import { dropRedisPrefix } from "../helpers/redis";
import { waitFor } from "../helpers/wait-for";

const QUEUE_PREFIX = `demo-test-${process.pid}`;

async function graphql<T>(url: string, query: string): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as { data?: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data as T;
}

// The demo crawls in the background: each check is retried until it holds or this long has passed.
const EVENTUALLY = { timeoutMs: 60_000, intervalMs: 500, retryErrors: true };

describe("gsindex demo", () => {
  let database: TestDatabase;
  let demo: RunningDemo;

  beforeAll(async () => {
    database = await createTestDatabase("gsindex_demo_test");
    demo = await startDemo({
      servers: 120,
      apiPort: 0, // the OS picks it: apiUrl must name the bound port
      managementPort: await freePort(),
      crawlIntervalMs: 2000,
      dayMs: 60_000,
      env: {
        DATABASE_URL: database.url,
        ...testQueueEnv(),
        GSINDEX_QUEUE_PREFIX: QUEUE_PREFIX,
        LOG_LEVEL: "silent",
      },
      logger: silentLogger,
      fleetHost: "127.0.0.91",
      fleetBasePort: 23000 + (process.pid % 1000) * 5,
    });
  }, 60_000);

  afterAll(async () => {
    await demo?.stop();
    await database?.drop();
    await dropRedisPrefix(QUEUE_PREFIX);
  }, 60_000);

  it("serves a populated index with history for every kind of source within a minute", async () => {
    expect(demo.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/graphql$/);
    // The web pages are served by the same process, at the URL the demo prints first.
    expect(demo.webUrl).toBe(demo.apiUrl.replace(/graphql$/, ""));
    const page = await fetch(demo.webUrl, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/web/app.js");
    type Count = { servers: { totalCount: number } };
    const online = (protocols: string[]): Promise<Count> =>
      graphql<Count>(
        demo.apiUrl,
        `{ servers(first: 1, filter: { statuses: [ONLINE], protocols: ${JSON.stringify(protocols)} }) { totalCount } }`,
      );
    await waitFor(
      "100 A2S servers online",
      async () => {
        const a2s = (await online(["source"])).servers.totalCount;
        if (a2s < 100) throw new Error(`${a2s} A2S servers online so far`);
        return a2s;
      },
      EVENTUALLY,
    );
    // registered with the management server (never queried), and the older protocols from the address lists
    await waitFor(
      "a management-server registration online",
      async () => (await online(["bomberman"])).servers.totalCount > 0,
      EVENTUALLY,
    );
    const legacy = [
      "quake2",
      "quake3",
      "gamespy1",
      "gamespy2",
      "gamespy3",
      "doom3",
      "halflife",
      "ase",
    ];
    await waitFor(
      "a server of an older protocol online",
      async () => (await online(legacy)).servers.totalCount > 0,
      EVENTUALLY,
    );

    type History = {
      servers: { edges: { node: { history: { points: { playersAvg: number }[] } } }[] };
    };
    const history = await graphql<History>(
      demo.apiUrl,
      '{ servers(first: 20, filter: { statuses: [ONLINE], protocols: ["source"] }) { edges { node { history(resolution: RAW) { points { playersAvg } } } } } }',
    );
    expect(history.servers.edges.some((e) => e.node.history.points.length > 0)).toBe(true);
  }, 90_000);
});
