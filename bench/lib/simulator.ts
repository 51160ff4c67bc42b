/**
 * Starts `gsindex simulate` (the project's own CLI, compiled in dist/) as a child and waits until every
 * server is up; the fleet (SimServerSpec[]) is read back from its --json-out file.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { playerClockArgs } from "../../src/simulator/fleet-processes";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import type { FleetMix } from "../../src/simulator/make-fleet";
import { repoRoot, spawnNode, stopChild, waitForLine } from "./child";

export interface SimulatorOptions {
  servers: number;
  processes?: number;
  hosts: string[];
  basePort: number;
  seed?: number;
  mix?: Partial<FleetMix>;
  /** Players' connection times run on, as on a real server (gsindex simulate --player-clock). */
  playerClock?: boolean;
  /** Players leave and others join (gsindex simulate --player-sessions; implies the player clock). */
  playerSessions?: boolean;
  /** Seconds of the servers' life per second of the clock (--player-clock-rate). */
  playerClockRate?: number;
  jsonOut: string;
}

export interface RunningSimulator {
  specs: SimServerSpec[];
  /** The CLI's process (with one process it serves the fleet itself). */
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A fleet where every server answers all three queries: what a throughput race needs. */
export const ANSWERING_MIX: Partial<FleetMix> = {
  silent: 0,
  lossy: 0,
  slow: 0,
  malformed: 0,
  legacyChallenge: 0,
  noRules: 0,
  duplicating: 0,
};

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  const args = [
    "simulate",
    "--servers",
    String(options.servers),
    "--processes",
    String(options.processes ?? 1),
    "--hosts",
    options.hosts.join(","),
    "--base-port",
    String(options.basePort),
    "--seed",
    String(options.seed ?? 1),
    "--json-out",
    options.jsonOut,
  ];
  if (options.mix) args.push("--mix", JSON.stringify(options.mix));
  args.push(...playerClockArgs(options));
  const child = spawnNode(path.join(repoRoot(), "bin", "gsindex.js"), args, {
    raiseFileLimit: true,
  });
  child.stdin?.on("error", () => undefined);
  try {
    await waitForLine(child, (line) => line.startsWith("simulating"), 10 * 60_000);
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  child.stdout?.resume();
  const fleet = JSON.parse(readFileSync(options.jsonOut, "utf8")) as { servers: SimServerSpec[] };
  return { specs: fleet.servers, child, stop: () => stopChild(child, 15_000) };
}

/** CPU milliseconds (user + system) a process has used so far, from /proc (Linux). */
export function procCpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after "pid (comm) ".
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** Peak RSS (VmHWM) of a running process, from /proc (Linux). */
export function procPeakRssBytes(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}
