/**
 * The rate limit counted in PostgreSQL (queues on PostgreSQL, no Redis): two limiters on one database,
 * as two API processes would be, share their counts; a new window starts from zero.
 */
import { createPostgresRateLimiter } from "../../src/graphql/rate-limit";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase("gsindex_ratelimit_pg");
});

afterAll(async () => {
  await t?.drop();
});

it("counts the hits of every limiter on the database together, per client and window", async () => {
  let now = 1_000_000;
  const errors: unknown[] = [];
  const options = { maxRequests: 3, windowMs: 60_000 };
  const first = createPostgresRateLimiter(
    t.db,
    "gsindex_test_queue",
    "api-ratelimit:",
    options,
    (err) => errors.push(err),
    () => now,
  );
  const second = createPostgresRateLimiter(
    t.db,
    "gsindex_test_queue",
    "api-ratelimit:",
    options,
    (err) => errors.push(err),
    () => now,
  );
  // The first hit creates the table; it may take longer than the counter's deadline and be counted locally.
  await first.hit("warm-up");
  expect(await first.hit("a", 2)).toMatchObject({ allowed: true, count: 2, remaining: 1 });
  expect(await second.hit("a", 0)).toMatchObject({ allowed: true, count: 2 });
  expect(await second.hit("a")).toMatchObject({ allowed: true, count: 3, remaining: 0 });
  expect(await first.hit("a")).toMatchObject({ allowed: false, count: 4 });
  expect(await first.hit("b")).toMatchObject({ allowed: true, count: 1 });
  now += 60_000;
  expect(await second.hit("a")).toMatchObject({ allowed: true, count: 1 });
  const rows = await t.db.$queryRawUnsafe<Array<{ n: number }>>(
    "select count(*)::int as n from gsindex_test_queue.api_rate_limit",
  );
  expect(rows[0]?.n).toBeGreaterThanOrEqual(3);
  expect(errors.filter((e) => !String(e).includes("no answer"))).toEqual([]);
});
