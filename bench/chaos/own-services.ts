/**
 * The chaos run's own PostgreSQL (the distribution's binaries, /usr/lib/postgresql/<v>/bin, run as the
 * postgres user when we are root) and redis-server (from the PATH), on spare loopback ports with their
 * files in a temporary folder: the faults stop and kill these, never the machine's shared servers.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/shared/free-port';
import { canPingRedis, canQueryPostgres } from '../../src/shared/services';

function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'pg_ctl'))) return path.join(root, v, 'bin');
  throw new Error('no PostgreSQL binaries under /usr/lib/postgresql/<version>/bin (apt-get install postgresql)');
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL tool, as the postgres user when we are root (PostgreSQL refuses to run as root). */
function pgTool(bin: string, tool: string, args: string[]): void {
  const command = asRoot ? 'runuser' : path.join(bin, tool);
  const full = asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args;
  execFileSync(command, full, { stdio: 'ignore', timeout: 120_000 });
}

export interface OwnPostgres {
  port: number;
  /** The maintenance database's URL. */
  adminUrl: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  destroy(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBin();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gsindex-chaos-pg-'));
  chmodSync(dir, 0o755);
  const data = path.join(dir, 'data');
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  pgTool(bin, 'initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const start = async (): Promise<void> => {
    pgTool(bin, 'pg_ctl', ['-D', data, '-l', path.join(dir, 'postgres.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, 'start']);
    for (let i = 0; i < 100 && !(await canQueryPostgres(adminUrl)); i += 1) await new Promise((r) => setTimeout(r, 100));
  };
  const stop = async (): Promise<void> => {
    try {
      pgTool(bin, 'pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'fast', 'stop']);
    } catch {
      // already stopped
    }
  };
  await start();
  return {
    port,
    adminUrl,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface OwnRedisServer {
  port: number;
  url: string;
  pause(): void;
  resume(): void;
  /** SIGKILL; restart() brings up a new, empty one on the same port. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  destroy(): Promise<void>;
}

async function launchRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i += 1) {
    if (await canPingRedis('127.0.0.1', port)) return child;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not start on 127.0.0.1:${port}`);
}

export async function startOwnRedis(): Promise<OwnRedisServer> {
  const port = await freePort();
  let child = await launchRedis(port);
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await gone;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    kill,
    async restart() {
      child = await launchRedis(port);
    },
    destroy: kill,
  };
}
