/**
 * The crawl end to end against real PostgreSQL and Redis: a simulated Valve master listing 2,000
 * simulated servers over every region, crawled by BullMQ workers (in this process, then in a child
 * process `gsindex serve --role worker` that is killed mid-crawl and started again). Run once with the
 * queues on Redis and once on BullMQ's PostgreSQL backend (QUEUE_BACKEND); without Redis only the latter.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { crawlKeyOf } from "../../src/crawler/crawl-jobs";
import {
  createCrawlQueues,
  createQueueSink,
  enqueueCrawl,
  type CrawlQueues,
  type QueueBackend,
  type QueueStore,
} from "../../src/crawler/queues";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import { upsertIndexSource } from "../../src/crawler/scheduler";
import { startWorkers, type RunningWorkers } from "../../src/crawler/workers";
import { loadConfig, type Config } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { startSimValveMaster, type SimValveMaster } from "../../src/simulator/master";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { describeWithRedis } from "../helpers/queue-backend";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, "..", "..");
const CLI = path.join(ROOT, "bin", "gsindex.js");
const BUILT = existsSync(path.join(ROOT, "dist", "cli", "main.js"));
const COUNT = 2000;

/** `redisUrl`: the shared Redis, for the Redis backend. */
function crawlEndToEnd(backend: QueueBackend, redisUrl: string | null): void {
  let t: TestDatabase;
  let store: QueueStore;
  let fleet: RunningFleet;
  let master: SimValveMaster;
  let config: Config;
  let env: Record<string, string>;
  let queues: CrawlQueues;
  let workers: RunningWorkers | null = null;
  let sourceId: number;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await createTestDatabase();
    fleet = await startFleet(
      makeFleet({
        count: COUNT,
        seed: 42,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0 },
      }),
    );
    master = await startSimValveMaster({ fleet: fleet.specs, rateLimit: false });
    store =
      redisUrl === null
        ? { backend: "postgres", databaseUrl: t.url }
        : { backend: "redis", redisUrl };
    env = {
      DATABASE_URL: t.url,
      ...(redisUrl === null ? {} : { REDIS_URL: redisUrl }),
      QUEUE_BACKEND: backend,
      GSINDEX_QUEUE_PREFIX: `gsindex-test-${randomBytes(4).toString("hex")}`,
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
      // The whole simulated fleet listens on 127.0.0.1: 2,000 ports on one IP, a farm by the farm rule's count.
      FARM_RULE_EXEMPT_RANGES: "127.0.0.1",
      // The fleet answers from this jest process, whose event loop lags behind on a loaded machine: at 1.5 s,
      // 42-230 of 2,000 answered queries timed out with the load average at 10-20; a dead server's timeout is
      // all this lengthens.
      QUERY_TIMEOUT_MS: "6000",
      QUERY_BATCH_SIZE: "100",
      WORKER_CONCURRENCY: "4",
      OFFLINE_AFTER_FAILURES: "1",
      WORKER_STALLED_INTERVAL_MS: "1000",
      WORKER_LOCK_DURATION_MS: "2000",
      JOB_BACKOFF_MS: "200",
      MIGRATE_ON_START: "0",
      LOG_LEVEL: "warn",
      // Each crawl here lists, then queries what it listed; querying from the index is cadence.int's.
      QUERY_FROM_INDEX: "0",
    };
    config = loadConfig(env);
    queues = createCrawlQueues({
      ...store,
      prefix: config.queuePrefix,
      jobAttempts: config.jobAttempts,
      jobBackoffMs: config.jobBackoffMs,
    });
    sourceId = (
      await t.db.masterSource.create({
        data: {
          name: "sim-master",
          kind: "VALVE_UDP",
          host: master.address.host,
          port: master.address.port,
          options: { requestsPerMinute: 0 },
        },
      })
    ).id;
  });

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    await workers?.stop();
    await queues?.crawl.obliterate({ force: true }).catch(() => undefined);
    await queues?.query.obliterate({ force: true }).catch(() => undefined);
    await queues?.close();
    await master?.close();
    await fleet?.stop();
    await t?.drop();
  });

  /** The child's environment: this one's, with the backend's settings (no REDIS_URL for PostgreSQL). */
  function childEnv(): NodeJS.ProcessEnv {
    const inherited: NodeJS.ProcessEnv = { ...process.env };
    delete inherited.REDIS_URL;
    return { ...inherited, ...env };
  }

  function startInProcessWorkers(): RunningWorkers {
    const deps = buildCrawlDeps({
      config,
      db: t.db,
      logger: silentLogger,
      sink: createQueueSink(queues),
    });
    return startWorkers(
      deps,
      {
        ...store,
        prefix: config.queuePrefix,
        concurrency: config.workerConcurrency,
        stalledIntervalMs: config.workerStalledIntervalMs,
        lockDurationMs: config.workerLockDurationMs,
        historyRawDays: 7,
        historyRollupDays: 0,
        graceMs: 5000,
      },
      silentLogger,
    );
  }

  async function crawlAndWait(): Promise<number> {
    const now = Date.now();
    await enqueueCrawl(queues, sourceId, now);
    const key = crawlKeyOf("sim-master", now);
    const crawl = await waitFor(
      "the crawl to finish",
      () => t.db.crawl.findFirst({ where: { key, finishedAt: { not: null } } }),
      { timeoutMs: 120_000 },
    );
    return Number(crawl.id);
  }

  it("indexes every server of every region, with its state", async () => {
    workers = startInProcessWorkers();
    const crawlId = await crawlAndWait();
    const crawl = await t.db.crawl.findUniqueOrThrow({ where: { id: crawlId } });
    expect(crawl).toMatchObject({
      listed: COUNT,
      queried: COUNT,
      answered: COUNT,
      failed: 0,
      written: COUNT,
      partial: false,
    });
    const runs = await t.db.crawlRun.findMany({ where: { crawlId } });
    expect(runs).toHaveLength(9);
    expect(runs.every((r) => r.finishedAt !== null && !r.partial)).toBe(true);

    const servers = await t.db.gameServer.findMany();
    expect(servers).toHaveLength(COUNT);
    const bySpec = new Map(fleet.specs.map((s) => [`${s.host}:${s.queryPort}`, s]));
    for (const s of servers) {
      const spec = bySpec.get(`${s.address}:${s.queryPort}`);
      expect(spec).toBeDefined();
      expect(s.status).toBe("ONLINE");
      expect(s.name).toBe(spec!.state.name);
      expect(s.map).toBe(spec!.state.map);
      expect(s.folder).toBe(spec!.state.folder);
      expect(s.players).toBe(spec!.state.players);
      // A2S carries max players in one byte.
      expect(s.maxPlayers).toBe(Math.min(spec!.state.maxPlayers, 255));
      expect(s.region).toBe(spec!.region === 0xff ? 0xff : spec!.region);
    }
    expect(await t.db.serverSample.count()).toBe(COUNT);
    // The roll-up follows the close (and the shared-names check after it), so it may land just after
    // finished_at is set.
    await waitFor("the crawl's roll-up", async () => (await t.db.serverDay.count()) === COUNT, {
      timeoutMs: 60_000,
    });
  });

  it("adds exactly one sample per server with a second crawl", async () => {
    await crawlAndWait();
    expect(await t.db.serverSample.count()).toBe(2 * COUNT);
    const odd = await t.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT game_server_id FROM server_sample GROUP BY game_server_id HAVING count(*) <> 2) x`;
    expect(odd[0]!.n).toBe(0);
  });

  it("turns a server that stops answering OFFLINE with its last data intact", async () => {
    const victim = fleet.servers[17]!;
    const before = await t.db.gameServer.findFirstOrThrow({
      where: { address: victim.spec.host, queryPort: victim.spec.queryPort },
    });
    victim.behaviour.silent = true;
    const crawlId = await crawlAndWait();
    const after = await t.db.gameServer.findUniqueOrThrow({ where: { id: before.id } });
    expect(after).toMatchObject({
      status: "OFFLINE",
      consecutiveFailures: 1,
      lastError: "TIMEOUT",
    });
    expect(after).toMatchObject({
      name: before.name,
      map: before.map,
      players: before.players,
      lastAnsweredAt: before.lastAnsweredAt,
    });
    const sample = await t.db.serverSample.findFirstOrThrow({
      where: { gameServerId: before.id, crawlId },
    });
    expect(sample.online).toBe(false);
    expect((await t.db.crawl.findUniqueOrThrow({ where: { id: crawlId } })).failed).toBe(1);
    await workers!.stop();
    workers = null;
  });

  (BUILT ? it : it.skip)(
    "completes a crawl whose worker process is killed midway, with no duplicate and nothing lost",
    async () => {
      const spawnWorker = (): ChildProcess => {
        const child = spawn(process.execPath, [CLI, "serve", "--role", "worker"], {
          // What this test checks (every server written once) does not depend on answers, only on the crawl
          // finishing: a short query timeout keeps the servers that never answer A2S_RULES from stretching it.
          env: {
            ...childEnv(),
            WORKER_CONCURRENCY: "2",
            QUERY_CONCURRENCY: "100",
            QUERY_BATCH_SIZE: "50",
            QUERY_TIMEOUT_MS: "1500",
          },
          stdio: ["ignore", "ignore", "pipe"],
        });
        child.stderr?.resume();
        children.push(child);
        return child;
      };
      const now = Date.now();
      await enqueueCrawl(queues, sourceId, now);
      const key = crawlKeyOf("sim-master", now);
      const first = spawnWorker();
      const midway = await waitFor(
        "the crawl to be under way",
        async () => {
          const c = await t.db.crawl.findUnique({ where: { key } });
          return c && c.queried >= 200 && c.queried < COUNT - 200 ? c : null;
        },
        { timeoutMs: 120_000 },
      );
      first.kill("SIGKILL");
      await new Promise((r) => first.once("exit", r));
      const stoppedAt = await t.db.crawl.findUniqueOrThrow({ where: { id: midway.id } });
      expect(stoppedAt.finishedAt).toBeNull();

      const second = spawnWorker();
      const done = await waitFor(
        "the crawl to finish after the restart",
        () => t.db.crawl.findFirst({ where: { key, finishedAt: { not: null } } }),
        { timeoutMs: 240_000 },
      );
      second.kill("SIGTERM");
      await new Promise((r) => second.once("exit", r));

      const perServer = await t.db.$queryRaw<{ servers: number; samples: number }[]>`
      SELECT count(DISTINCT game_server_id)::int AS servers, count(*)::int AS samples FROM server_sample WHERE crawl_id = ${done.id}`;
      expect(perServer[0]).toEqual({ servers: COUNT, samples: COUNT });
      expect(done).toMatchObject({ listed: COUNT, queried: COUNT, written: COUNT });
      expect(await t.db.crawlBatch.count({ where: { crawlId: done.id, doneAt: null } })).toBe(0);
    },
  );

  (BUILT ? it : it.skip)("gsindex crawl --once shows progress and totals", async () => {
    // With the default settings (QUERY_FROM_INDEX on), as after a `gsindex serve`: the `index` source exists,
    // and a one-off crawl still queries every server it lists, known or not, and crawls no source twice.
    await upsertIndexSource(t.db, { enabled: true, intervalMs: 300_000 });
    const defaults: NodeJS.ProcessEnv = { ...childEnv(), LOG_LEVEL: "debug" };
    delete defaults.QUERY_FROM_INDEX;
    const child = spawn(process.execPath, [CLI, "crawl", "--once"], {
      env: defaults,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    expect(code).toBe(0);
    expect(err).toMatch(
      /sim-master: listed 2000 · queried 2000 · answered \d+ · failed \d+ · written 2000 · \d+\/s/,
    );
    // The service's memory settings (src/service/v8-memory.ts) apply to a one-off crawl too.
    expect(out + err).toMatch(
      /"v8Flags":\["--heap-growing-percent=100","--liftoff-only"\].*"memory settings"/,
    );
    expect(out).toMatch(
      /sim-master crawl sim-master-\d+: 2000 listed, 2000 queried, \d+ answered, \d+ failed, 2000 samples written in/,
    );
    expect(out.match(/^\S+ crawl \S+: \d+ listed/gm)).toHaveLength(1);
  });
}

describeWithRedis("crawl end to end, queues on redis", (redisUrl) =>
  crawlEndToEnd("redis", redisUrl),
);
describe("crawl end to end, queues on postgres", () => crawlEndToEnd("postgres", null));
