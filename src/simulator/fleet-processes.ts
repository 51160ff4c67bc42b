/**
 * A fleet larger than one process should hold (100,000 servers = 10 processes of 10,000 sockets):
 * child processes, each serving one slice of the same deterministic fleet on its own loopback
 * address (127.0.0.1, 127.0.0.2, ...; all of 127.0.0.0/8 is loopback on Linux). Each child runs
 * `gsindex simulate --slice K/P ...` under `sh -c 'ulimit -n <hard limit>'`, because Node cannot
 * raise its own open-file limit and every simulated server is one socket.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import type { StartFleetOptions } from "./fleet";
import type { SimServerSpec } from "./fleet-spec";
import { makeFleet, type FleetMix } from "./make-fleet";

/** Below Linux's ephemeral range (32768-60999), so client sockets never hold a simulated server's port. */
export const DEFAULT_SIM_BASE_PORT = 20000;

export interface FleetLayout {
  count: number;
  seed: number;
  processes: number;
  basePort: number;
  /** One loopback address per process. @defaultValue 127.0.0.1, 127.0.0.2, ... */
  hosts: string[];
  mix?: Partial<FleetMix>;
  /** Players' connection times run on (gsindex simulate --player-clock). @defaultValue false */
  playerClock?: boolean;
  /** Players leave and others join; implies playerClock (--player-sessions). @defaultValue false */
  playerSessions?: boolean;
  /** Seconds of the servers' life per second of the clock (--player-clock-rate). @defaultValue 1 */
  playerClockRate?: number;
}

/** Fills in the defaults: one host per process, ceil(count / processes) servers on each. */
export function fleetLayout(options: {
  count: number;
  seed?: number;
  processes?: number;
  basePort?: number;
  hosts?: string[];
  mix?: Partial<FleetMix>;
  playerClock?: boolean;
  playerSessions?: boolean;
  playerClockRate?: number;
}): FleetLayout {
  const processes = options.processes ?? 1;
  const hosts = options.hosts ?? Array.from({ length: processes }, (_v, i) => `127.0.0.${i + 1}`);
  if (hosts.length !== processes)
    throw new RangeError(`${processes} process(es) need as many hosts, got ${hosts.length}`);
  const layout: FleetLayout = {
    count: options.count,
    seed: options.seed ?? 1,
    processes,
    basePort: options.basePort ?? DEFAULT_SIM_BASE_PORT,
    hosts,
  };
  if (options.mix) layout.mix = options.mix;
  if (options.playerClock === true || options.playerSessions === true) layout.playerClock = true;
  if (options.playerSessions === true) layout.playerSessions = true;
  if (options.playerClockRate !== undefined && options.playerClockRate !== 1)
    layout.playerClockRate = options.playerClockRate;
  return layout;
}

/** The servers of the whole layout, as every process builds them. */
export function layoutSpecs(layout: FleetLayout): SimServerSpec[] {
  const options = {
    count: layout.count,
    seed: layout.seed,
    hosts: layout.hosts,
    basePort: layout.basePort,
    serversPerHost: Math.ceil(layout.count / layout.processes),
  };
  return makeFleet(layout.mix ? { ...options, mix: layout.mix } : options);
}

/**
 * How a process of `gsindex simulate` starts its servers: their replies encoded before it says it is ready
 * (the fleet stands in for servers elsewhere, whose answers cost the querying machine nothing), with the
 * wall clock as the player clock when the layout asks for one.
 */
export function fleetOptions(layout: FleetLayout): StartFleetOptions {
  if (layout.playerClock !== true) return { prepareReplies: true };
  const options: StartFleetOptions = { prepareReplies: true, playerClockMs: () => Date.now() };
  if (layout.playerSessions === true) options.playerSessions = true;
  if (layout.playerClockRate !== undefined) options.playerClockRate = layout.playerClockRate;
  return options;
}

/** The index range [start, end) process `slice` serves. */
export function sliceRange(layout: FleetLayout, slice: number): { start: number; end: number } {
  const per = Math.ceil(layout.count / layout.processes);
  return { start: slice * per, end: Math.min(layout.count, (slice + 1) * per) };
}

export interface FleetProcesses {
  specs: SimServerSpec[];
  stop(): Promise<void>;
}

/** The CLI entry children run; dist's bin/gsindex.js (build first: npm run build). */
export function defaultCliScript(): string {
  return path.resolve(__dirname, "..", "..", "bin", "gsindex.js");
}

/** The `gsindex simulate` flags that ask for a layout's player clock, sessions and clock rate. */
export function playerClockArgs(
  options: Pick<FleetLayout, "playerClock" | "playerSessions" | "playerClockRate">,
): string[] {
  const args: string[] = [];
  if (options.playerClock === true) args.push("--player-clock");
  if (options.playerSessions === true) args.push("--player-sessions");
  if (options.playerClockRate !== undefined)
    args.push("--player-clock-rate", String(options.playerClockRate));
  return args;
}

function childArgs(layout: FleetLayout, slice: number): string[] {
  const args = [
    "simulate",
    "--servers",
    String(layout.count),
    "--processes",
    String(layout.processes),
    "--seed",
    String(layout.seed),
    "--base-port",
    String(layout.basePort),
    "--hosts",
    layout.hosts.join(","),
    "--slice",
    `${slice}/${layout.processes}`,
  ];
  if (layout.mix) args.push("--mix", JSON.stringify(layout.mix));
  args.push(...playerClockArgs(layout));
  return args;
}

function waitReady(child: ChildProcess, slice: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (!child.stdout) {
      reject(new Error("child has no stdout"));
      return;
    }
    const lines = createInterface({ input: child.stdout });
    const onExit = (code: number | null): void =>
      reject(new Error(`simulator process ${slice} exited (${code}) before it was ready`));
    child.once("exit", onExit);
    lines.on("line", (line) => {
      if (line.startsWith('{"ready"')) {
        child.off("exit", onExit);
        resolve();
      }
    });
  });
}

/** Starts `layout.processes` children and resolves once every one of them is serving. */
export async function startFleetProcesses(
  layout: FleetLayout,
  options: { script?: string } = {},
): Promise<FleetProcesses> {
  if (layout.basePort === 0)
    throw new RangeError("a fleet over several processes needs a fixed base port");
  const script = options.script ?? defaultCliScript();
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) {
              resolve();
              return;
            }
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      ),
    );
  };
  try {
    const ready: Promise<void>[] = [];
    for (let slice = 0; slice < layout.processes; slice++) {
      const child = spawn(
        "/bin/sh",
        [
          "-c",
          'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"',
          "sh",
          process.execPath,
          script,
          ...childArgs(layout, slice),
        ],
        {
          // stdin stays open: a child whose parent is gone sees it end and exits.
          stdio: ["pipe", "pipe", "inherit"],
        },
      );
      children.push(child);
      ready.push(waitReady(child, slice));
    }
    await Promise.all(ready);
  } catch (err) {
    await stop();
    throw err;
  }
  return { specs: layoutSpecs(layout), stop };
}
