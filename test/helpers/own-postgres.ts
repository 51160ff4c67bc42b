/**
 * A PostgreSQL of a test's own (fault tests stop and start it; the shared server is never touched):
 * the local binaries (/usr/lib/postgresql/<version>/bin, or PG_BIN), a data folder under the temp dir,
 * a free loopback port, trust auth. Run as root, PostgreSQL runs as the postgres user.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../src/shared/free-port';

export interface OwnPostgres {
  /** Server URL (database `postgres`). */
  url: string;
  start(): Promise<void>;
  /** Fast shutdown: sessions are terminated (57P01), the data stays. */
  stop(): Promise<void>;
  /** Stops it if running and deletes its data. */
  destroy(): Promise<void>;
}

function binDir(): string | null {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

export const ownPostgresAvailable = binDir() !== null;

async function ready(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = binDir();
  if (bin === null) throw new Error('no PostgreSQL binaries (set PG_BIN)');
  const root = mkdtempSync(path.join(tmpdir(), 'gsindex-own-pg-'));
  chmodSync(root, 0o755);
  const data = path.join(root, 'data');
  const asRoot = userInfo().uid === 0;
  let ids: { uid: number; gid: number } | undefined;
  if (asRoot) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    ids = { uid: id('-u'), gid: id('-g') };
    chownSync(root, ids.uid, ids.gid);
  }
  const init = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync'], { ...(ids ?? {}), encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | null = null;

  const api: OwnPostgres = {
    url,
    async start() {
      if (child) return;
      const c = spawn(path.join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'], {
        ...(ids ?? {}),
        stdio: 'ignore',
      });
      child = c;
      for (let i = 0; i < 150 && !(await ready(url)); i++) {
        if (c.exitCode !== null) throw new Error(`postgres exited with ${c.exitCode}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      const c = child;
      if (!c) return;
      child = null;
      if (c.exitCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGINT');
      await exited;
    },
    async destroy() {
      await api.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
  await api.start();
  return api;
}
