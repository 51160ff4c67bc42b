import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const root = path.resolve(__dirname, "..", "..");
const stopSignalJs = path.join(root, "dist", "cli", "stop-signal.js");

/** A command that stops slowly, as the service does, listening through waitForStopSignal. */
function slowStopper(stopMs: number): ChildProcess {
  const script = `
    const { waitForStopSignal } = require(${JSON.stringify(stopSignalJs)});
    waitForStopSignal().then((signal) => {
      process.stdout.write("stopping " + signal + "\\n");
      setTimeout(() => { process.stdout.write("stopped\\n"); process.exit(0); }, ${stopMs});
    });
    process.stdout.write("ready\\n");
    setInterval(() => {}, 1000);
  `;
  return spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
}

function outputOf(child: ChildProcess): {
  text: () => string;
  line: (want: string) => Promise<void>;
} {
  let text = "";
  const waiters: Array<() => void> = [];
  child.stdout?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  const line = async (want: string): Promise<void> => {
    while (!text.split("\n").some((l) => l.startsWith(want))) {
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { text: () => text, line };
}

function exitOf(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
}

(existsSync(stopSignalJs) ? describe : describe.skip)("waitForStopSignal (built)", () => {
  it("keeps listening after the first signal: a duplicate during the stop neither kills nor hurries it", async () => {
    const child = slowStopper(1500);
    const out = outputOf(child);
    const exited = exitOf(child);
    await out.line("ready");
    child.kill("SIGTERM");
    await out.line("stopping SIGTERM");
    // The forwarded copy of the same request: with no listener left it would take the default action.
    child.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(out.text()).toContain("stopped");
  });

  it("exits at once with code 1 on a later, second stop request", async () => {
    const child = slowStopper(60_000);
    const out = outputOf(child);
    const exited = exitOf(child);
    await out.line("ready");
    child.kill("SIGINT");
    await out.line("stopping SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 1200));
    child.kill("SIGINT");
    expect(await exited).toEqual({ code: 1, signal: null });
    expect(out.text()).not.toContain("stopped");
  });
});
