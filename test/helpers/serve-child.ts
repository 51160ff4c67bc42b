/**
 * `gsindex serve` (the built CLI, as an operator runs it) as a child process whose log lines are kept,
 * for tests that signal it or take its dependencies away.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

export const CLI = path.resolve(__dirname, "..", "..", "bin", "gsindex.js");

export interface ServeChild {
  child: ChildProcess;
  /** Every line written to stderr (the JSON log) and stdout so far. */
  lines: string[];
  /** Resolves with the exit code (or signal) and when, in ms since the epoch. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
  /** SIGKILL if still running (cleanup). */
  kill(): Promise<void>;
}

export function startServeChild(roles: string[], env: NodeJS.ProcessEnv): ServeChild {
  const child = spawn(process.execPath, [CLI, "serve", ...roles.flatMap((r) => ["--role", r])], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    let rest = "";
    stream?.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString("utf8")).split("\n");
      rest = parts.pop() ?? "";
      lines.push(...parts);
    });
    stream?.on("end", () => {
      if (rest !== "") lines.push(rest);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>(
    (resolve) => {
      child.once("close", (code, signal) => resolve({ code, signal, atMs: Date.now() }));
    },
  );
  return {
    child,
    lines,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
