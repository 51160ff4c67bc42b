/**
 * Runs one bench process (a contender, the crawler, the API) as a child so its CPU seconds and peak RSS
 * are its own. The child prints JSON lines on stdout; the line starting with {"result" is its answer.
 * Optionally with --cpu-prof into a directory, summarised by profile.ts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import path from "node:path";
import { missingServiceFlags, startFlags } from "../../src/service/node-flags";

export interface ChildRun<T> {
  result: T;
  exitCode: number | null;
  stderr: string;
}

export interface ChildOptions {
  /** Extra node flags (e.g. --cpu-prof, --cpu-prof-dir=...). */
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Kill the child after this long. @defaultValue 20 minutes */
  timeoutMs?: number;
  /** Raise the open-file limit to the hard limit first (simulators, fabricio's socket per server). */
  raiseFileLimit?: boolean;
  onLine?: (line: string) => void;
}

/**
 * The node flags a `gsindex serve` child starts with: the service's start-only flags, as the Docker image
 * and `npm start` pass them (src/service/node-flags.ts), less any that the child's NODE_OPTIONS sets
 * itself (a `--crawl-tuned NODE_OPTIONS=...` run), since a flag on the command line would override it.
 */
export function serviceNodeArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  return missingServiceFlags(startFlags([], env.NODE_OPTIONS));
}

/**
 * `gsindex <args>` of the checkout at `root` (this one by default), started as the service is started:
 * with serviceNodeArgs before any node flags of `options`.
 */
export function spawnService(
  args: string[],
  options: ChildOptions & { root?: string } = {},
): ChildProcess {
  const { root, ...rest } = options;
  return spawnNode(path.join(root ?? repoRoot(), "bin", "gsindex.js"), args, {
    ...rest,
    nodeArgs: [...serviceNodeArgs(rest.env), ...(rest.nodeArgs ?? [])],
  });
}

/** Absolute path of a compiled bench script: benchScript('query/contender') -> dist-bench/bench/query/contender.js */
export function benchScript(name: string): string {
  return path.resolve(__dirname, "..", `${name}.js`);
}

/** The repository root (dist-bench/bench/lib -> ../../..). */
export function repoRoot(): string {
  return path.resolve(__dirname, "..", "..", "..");
}

export function spawnNode(
  script: string,
  args: string[],
  options: ChildOptions = {},
): ChildProcess {
  const nodeArgs = [...(options.nodeArgs ?? []), script, ...args];
  const env = options.env ?? process.env;
  if (options.raiseFileLimit) {
    return spawn(
      "/bin/sh",
      [
        "-c",
        'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"',
        "sh",
        process.execPath,
        ...nodeArgs,
      ],
      { env, stdio: ["pipe", "pipe", "pipe"] },
    );
  }
  return spawn(process.execPath, nodeArgs, { env, stdio: ["pipe", "pipe", "pipe"] });
}

/** Runs a script to its end and returns its {"result": ...} line. */
export function runChild<T>(
  script: string,
  args: string[],
  options: ChildOptions = {},
): Promise<ChildRun<T>> {
  return new Promise<ChildRun<T>>((resolve, reject) => {
    const child = spawnNode(script, args, options);
    let result: T | undefined;
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 20 * 60_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
    });
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      if (line.startsWith('{"result"')) result = (JSON.parse(line) as { result: T }).result;
      else options.onLine?.(line);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (result === undefined)
        reject(
          new Error(
            `${path.basename(script)} ${args.join(" ")} ended (${code}) without a result:\n${stderr.slice(-3000)}`,
          ),
        );
      else resolve({ result, exitCode: code, stderr });
    });
  });
}

/** Inside a child: print the answer for runChild. */
export function reportResult(result: unknown): void {
  process.stdout.write(`${JSON.stringify({ result })}\n`);
}

/** Waits for a line from a long-running child (e.g. a simulator's {"ready"...}). */
export function waitForLine(
  child: ChildProcess,
  test: (line: string) => boolean,
  timeoutMs: number,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(
      () => reject(new Error(`no ready line after ${timeoutMs} ms: ${stderr}`)),
      timeoutMs,
    );
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code}) before it was ready: ${stderr}`));
    };
    child.once("exit", onExit);
    lines.on("line", (line) => {
      if (!test(line)) return;
      clearTimeout(timer);
      child.off("exit", onExit);
      resolve(line);
    });
  });
}

/** SIGTERM, then SIGKILL after graceMs; resolves when it has exited. */
export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** CPU seconds and peak RSS of this process, for children to report. */
export interface ProcessCost {
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Peak resident set size over the process's life (getrusage ru_maxrss). */
  peakRssBytes: number;
}

export function processCost(since: NodeJS.CpuUsage): ProcessCost {
  const cpu = process.cpuUsage(since);
  return {
    cpuUserMs: cpu.user / 1000,
    cpuSystemMs: cpu.system / 1000,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

/**
 * One byte that differs between bench runs on one machine (from the pid), so two runs at once use
 * different loopback addresses and database names instead of taking each other's.
 */
export const RUN_OCTET = 1 + (process.pid % 250);
