/**
 * A redis-server of the test's own on a spare loopback port, for fault tests that stop or kill it
 * (never the shared one on 6379). restart() brings a new, empty one up on the same port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../src/shared/free-port';
import { canPingRedis } from '../../src/shared/services';

export interface OwnRedis {
  port: number;
  url: string;
  pid(): number;
  /** SIGSTOP / SIGCONT: the server keeps its sockets but answers nothing. */
  pause(): void;
  resume(): void;
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function launch(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (await canPingRedis('127.0.0.1', port)) return child;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not start on 127.0.0.1:${port}`);
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child = await launch(port);
  const kill = async (): Promise<void> => {
    const done = exited(child);
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await done;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => child.pid as number,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    kill,
    async restart() {
      child = await launch(port);
    },
    stop: kill,
  };
}
