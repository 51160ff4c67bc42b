/**
 * A crawl write's connection that dies mid-transaction (PostgreSQL restarted or stopped, the backend
 * terminated): the write fails with the driver's error and the connection is not given back to the pool.
 * node-postgres emits the loss as an 'error' event on a checked-out client; without a listener that is an
 * uncaught exception, which took the whole worker down in the PostgreSQL-outage test.
 */
import { Client } from "pg";
import { inTransaction } from "../../src/crawler/store/batch-write";
import { pgPoolOf } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(60_000);

describe("inTransaction when the connection dies", () => {
  let t: TestDatabase;

  beforeAll(async () => {
    t = await createTestDatabase();
  });

  afterAll(async () => {
    await t?.drop();
  });

  it("rejects with the connection's error, and the next transaction runs on a new connection", async () => {
    const pool = pgPoolOf(t.db);
    let backendPid = 0;
    const write = inTransaction(pool, async (tx) => {
      backendPid = (await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      await tx.query("SELECT pg_sleep(30)");
      return "committed";
    });
    await waitFor("the transaction to be sleeping", () => backendPid !== 0, { timeoutMs: 20_000 });
    const admin = new Client({ connectionString: t.url });
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend($1)", [backendPid]);
    } finally {
      await admin.end();
    }
    await expect(write).rejects.toThrow(/terminat/);
    const again = await inTransaction(pool, async (tx) =>
      Number((await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid),
    );
    expect(again).not.toBe(backendPid);
  });
});
