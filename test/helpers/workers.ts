/**
 * The crawl workers a test runs in its own process: short stall and lock times, so a killed or stopped
 * worker's jobs come back within seconds, and raw history only (no rollup retention). Each test passes
 * where its queues live and what it changes (concurrency, grace, outage waits).
 */
import type { QueueStore } from "../../src/crawler/queues";
import type { WorkerSettings } from "../../src/crawler/workers";

export function testWorkerSettings(
  store: QueueStore,
  prefix: string,
  overrides: Partial<Omit<WorkerSettings, keyof QueueStore | "prefix">> = {},
): WorkerSettings {
  return {
    ...store,
    prefix,
    concurrency: 4,
    stalledIntervalMs: 5000,
    lockDurationMs: 10_000,
    historyRawDays: 7,
    historyRollupDays: 0,
    graceMs: 5000,
    ...overrides,
  };
}
