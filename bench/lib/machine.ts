/** The machine and service versions the figures were taken on, for the head of BENCHMARKS.md. */
import os from "node:os";
import { Client } from "pg";
import IORedis from "ioredis";

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  kernel: string;
  node: string;
  postgres: string;
  redis: string;
  loadAverage: number[];
}

async function postgresVersion(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
    const r = await client.query<{ v: string }>("SELECT version() AS v");
    return r.rows[0]?.v.split(" on ")[0] ?? "unknown";
  } catch (err) {
    return `unreachable (${err instanceof Error ? err.message : String(err)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisVersion(url: string): Promise<string> {
  const redis = new IORedis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const info = await redis.info("server");
    return /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown";
  } catch (err) {
    return `unreachable (${err instanceof Error ? err.message : String(err)})`;
  } finally {
    redis.disconnect();
  }
}

export async function describeMachine(
  adminDatabaseUrl: string,
  redisUrl: string,
): Promise<MachineInfo> {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    memoryBytes: os.totalmem(),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres: await postgresVersion(adminDatabaseUrl),
    redis: await redisVersion(redisUrl),
    loadAverage: os.loadavg(),
  };
}
