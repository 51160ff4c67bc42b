/**
 * The test command on a machine without Redis: scripts/with-services.js (what `npm test` runs jest through)
 * with GSINDEX_SKIP_LOCAL_SERVICES=1 and a PATH without redis-*, running suites that use Redis. The queue
 * tests run on PostgreSQL, the tests about Redis skip saying why, and the run passes.
 *
 * Where we can (root, `unshare -n`, `ip`), the run gets a network of its own with only a loopback: nothing
 * answers on 127.0.0.1:6379 or :5432, as on a bare machine, so a test that still reaches for the machine's
 * Redis fails here, and PostgreSQL is the embedded one. Elsewhere the run uses the tests' PostgreSQL and
 * shares this machine's network (which may have a Redis on 6379), and says so.
 */
import { execFile, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../../src/shared/free-port";
import { TEST_SERVER_URL } from "../helpers/db";
import { pathWithoutRedis } from "../helpers/path-without-redis";

jest.setTimeout(400_000);

const ROOT = path.resolve(__dirname, "..", "..");
const SUITES = [
  "test/graphql/limits.int.test.ts", // one test about Redis's shared rate limit, the rest without
  "test/crawler/serve.int.test.ts", // scheduler and workers on the queues
  "test/crawler/redis-lost.int.test.ts", // a Redis fault test: needs a redis-server of its own
];

/** The nested run's failed tests (jest's "●" blocks), or its last lines when it names none. */
function failureReport(output: string): string[] {
  const lines = output.split("\n");
  const blocks = lines.flatMap((line, i) => (/^\s*● /.test(line) ? lines.slice(i, i + 40) : []));
  return (blocks.length > 0 ? blocks : lines.slice(-60)).slice(0, 400);
}

function canIsolateNetwork(): boolean {
  if (process.getuid?.() !== 0) return false;
  return spawnSync("unshare", ["-n", "ip", "link", "set", "lo", "up"]).status === 0;
}

describe("the tests on a machine without Redis", () => {
  let binDir: string;
  let projectDir: string;

  beforeAll(() => {
    binDir = pathWithoutRedis(mkdtempSync(path.join(os.tmpdir(), "gsindex-no-redis-")));
    projectDir = mkdtempSync(path.join(os.tmpdir(), "gsindex-no-redis-project-"));
    chmodSync(projectDir, 0o755); // the embedded PostgreSQL runs as the postgres user when we are root
  });

  afterAll(() => {
    rmSync(binDir, { recursive: true, force: true });
    rmSync(projectDir, { recursive: true, force: true });
  });

  it("runs the queue tests on PostgreSQL and skips the tests about Redis, saying why", async () => {
    const isolated = canIsolateNetwork();
    if (!isolated)
      console.log(
        "no network namespace (needs root, unshare and ip): the run shares this machine's network and PostgreSQL",
      );
    const env: NodeJS.ProcessEnv = {
      PATH: binDir,
      HOME: process.env.HOME,
      GSINDEX_SKIP_LOCAL_SERVICES: "1",
      GSINDEX_PROJECT_DIR: projectDir,
      GSINDEX_EMBEDDED_PG_PORT: String(await freePort()),
      ...(isolated ? {} : { DATABASE_URL: TEST_SERVER_URL }),
    };
    const command = [
      process.execPath,
      path.join(ROOT, "scripts", "with-services.js"),
      "--",
      "npx",
      "jest",
      "--ci",
      "--verbose",
      ...SUITES,
    ];
    const [file, args] = isolated
      ? ["unshare", ["-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", ...command]]
      : [command[0] as string, command.slice(1)];
    const { code, output } = await new Promise<{ code: number | null; output: string }>(
      (resolve) => {
        execFile(
          file,
          args,
          { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 },
          (err, stdout, stderr) =>
            resolve({
              code: err ? ((err as { code?: number }).code ?? 1) : 0,
              output: stdout + stderr,
            }),
        );
      },
    );
    const summary = output.split("\n").filter((l) => /^(PASS|FAIL)|Tests:|skipped "/.test(l));
    // On a failure the nested run's own reasons show in this test's report: its failed tests, or its end.
    const why = code === 0 ? [] : failureReport(output);
    expect({ code, summary, why }).toEqual({ code: 0, summary: expect.any(Array), why: [] });
    expect(output).toContain("queues: PostgreSQL (no REDIS_URL and no Redis on 127.0.0.1:6379");
    if (isolated) expect(output).toContain("PostgreSQL: embedded");
    expect(output).toMatch(
      /skipped "with Redis: two API processes share one count": no Redis for the tests/,
    );
    expect(output).toMatch(
      /skipped "a crawl whose queued jobs Redis lost": no redis-server on the PATH/,
    );
    // The rest ran and passed (jest names no suite whose every test skipped).
    expect(output).not.toContain("FAIL integration");
    for (const suite of SUITES.slice(0, 2)) expect(output).toContain(`PASS integration ${suite}`);
    expect(output).toMatch(/Tests: +2 skipped, \d+ passed/);
  });
});
