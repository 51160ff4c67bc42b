/**
 * `gsindex simulate --servers N [--processes P] [--seed S] [--base-port PORT] [--hosts A,B,...]
 *  [--mix JSON] [--player-clock] [--player-sessions] [--player-clock-rate R] [--json-out FILE]`: runs a deterministic fleet of simulated A2S servers on loopback
 * until interrupted. P > 1 starts P child processes (one per loopback address), each one slice
 * (`--slice K/P`, internal). With --json-out the fleet (SimServerSpec[] plus the layout) is written
 * to FILE once every server is up; a master simulator or a bench can load it.
 */
import { writeFile } from "node:fs/promises";
import { startFleet, type RunningFleet } from "../../simulator/fleet";
import {
  fleetLayout,
  fleetOptions,
  layoutSpecs,
  sliceRange,
  startFleetProcesses,
  DEFAULT_SIM_BASE_PORT,
  type FleetLayout,
} from "../../simulator/fleet-processes";
import type { SimServerSpec } from "../../simulator/fleet-spec";
import type { FleetMix } from "../../simulator/make-fleet";
import { defineCommand } from "../define-command";
import { waitForStopSignal } from "../stop-signal";
import type { CommandIo } from "./io";

const command = defineCommand({
  name: "simulate",
  usage: `usage: gsindex simulate --servers N [--processes P] [--seed S] [--base-port PORT] [--hosts A,B,...] [--mix JSON] [--player-clock] [--player-sessions] [--player-clock-rate R] [--json-out FILE]

Runs N simulated Valve A2S servers on loopback until interrupted (Ctrl-C).
  --servers     how many servers
  --processes   child processes, one loopback address each (default 1; 100,000 servers: 10)
  --seed        the fleet is the same for the same seed (default 1)
  --base-port   first query port on each address (default ${DEFAULT_SIM_BASE_PORT}; 0 = any free port, one process only)
  --hosts       loopback addresses, one per process (default 127.0.0.1, 127.0.0.2, ...)
  --mix         fractions of unusual servers, e.g. '{"silent":0,"bigRules":0.5}' (see FleetMix)
  --player-clock  players' connection times run on, as on a real server (default: every reply is the same)
  --player-sessions  players also leave and others join (implies --player-clock; docs/simulator.md)
  --player-clock-rate  seconds of the servers' life per second of the clock (default 1)
  --json-out    write {"layout":{...},"servers":[SimServerSpec...]} to this file once all are up
Each server is one socket: a process holds about ulimit -n of them (children raise it to the hard limit).`,
  options: {
    servers: { type: "string" },
    processes: { type: "string" },
    seed: { type: "string" },
    "base-port": { type: "string" },
    hosts: { type: "string" },
    mix: { type: "string" },
    "player-clock": { type: "boolean" },
    "player-sessions": { type: "boolean" },
    "player-clock-rate": { type: "string" },
    "json-out": { type: "string" },
    slice: { type: "string" },
  },
});

function integer(text: string | undefined, name: string, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${name} must be a whole number >= ${min}`);
  return value;
}

/** A child: serve one slice, say so on stdout, stop on a signal or when the parent goes away. */
async function runSlice(layout: FleetLayout, slice: number, io: CommandIo): Promise<number> {
  const { start, end } = sliceRange(layout, slice);
  const specs = layoutSpecs(layout).slice(start, end);
  const fleet = await startFleet(specs, fleetOptions(layout));
  io.stdout.write(`${JSON.stringify({ ready: true, slice, servers: fleet.specs.length })}\n`);
  const parentGone = new Promise<string>((resolve) => {
    process.stdin.on("end", () => resolve("stdin closed"));
    process.stdin.on("error", () => resolve("stdin error"));
    process.stdin.resume();
  });
  await Promise.race([waitForStopSignal(), parentGone]);
  await fleet.stop();
  process.stdin.destroy();
  return 0;
}

function describeFleet(specs: SimServerSpec[]): string {
  const byHost = new Map<string, { min: number; max: number; count: number }>();
  for (const s of specs) {
    const entry = byHost.get(s.host) ?? { min: s.queryPort, max: s.queryPort, count: 0 };
    entry.min = Math.min(entry.min, s.queryPort);
    entry.max = Math.max(entry.max, s.queryPort);
    entry.count += 1;
    byHost.set(s.host, entry);
  }
  const lines = [...byHost].map(
    ([host, r]) => `  ${host}  ports ${r.min}-${r.max}  (${r.count} servers)`,
  );
  if (specs.length <= 50)
    lines.push(
      ...specs.map(
        (s) =>
          `  ${s.host.includes(":") ? `[${s.host}]` : s.host}:${s.queryPort}  ${s.state.game}: ${s.state.name}`,
      ),
    );
  return lines.join("\n");
}

export async function run(argv: string[], io: CommandIo = process): Promise<number> {
  let layout: FleetLayout;
  let slice: number | null = null;
  let jsonOut: string | undefined;
  const args = command.parse(argv, io);
  if (typeof args === "number") return args;
  const { values } = args;
  try {
    if (values.servers === undefined) throw new Error("--servers is required");
    const count = integer(values.servers, "servers", 0, 1);
    const processes = integer(values.processes, "processes", 1, 1);
    const options: Parameters<typeof fleetLayout>[0] = {
      count,
      processes,
      seed: integer(values.seed, "seed", 1, 0),
      basePort: integer(values["base-port"], "base-port", DEFAULT_SIM_BASE_PORT, 0),
    };
    if (values.hosts !== undefined) options.hosts = values.hosts.split(",").map((h) => h.trim());
    if (values.mix !== undefined) options.mix = JSON.parse(values.mix) as Partial<FleetMix>;
    if (values["player-clock"] === true) options.playerClock = true;
    if (values["player-sessions"] === true) options.playerSessions = true;
    if (values["player-clock-rate"] !== undefined)
      options.playerClockRate = integer(values["player-clock-rate"], "player-clock-rate", 1, 1);
    layout = fleetLayout(options);
    if (layout.basePort === 0 && processes > 1)
      throw new Error("--base-port 0 works with one process only");
    jsonOut = values["json-out"];
    if (values.slice !== undefined) {
      const match = /^(\d+)\/(\d+)$/.exec(values.slice);
      if (!match || Number(match[2]) !== processes || Number(match[1]) >= processes)
        throw new Error("--slice must be K/P with K < P");
      slice = Number(match[1]);
    }
  } catch (err) {
    io.stderr.write(
      `gsindex simulate: ${err instanceof Error ? err.message : String(err)}\n${command.usage}\n`,
    );
    return 2;
  }

  if (slice !== null) return runSlice(layout, slice, io);

  let specs: SimServerSpec[];
  let stop: () => Promise<void>;
  try {
    if (layout.processes === 1) {
      const fleet: RunningFleet = await startFleet(layoutSpecs(layout), fleetOptions(layout));
      specs = fleet.specs;
      stop = fleet.stop;
    } else {
      const fleet = await startFleetProcesses(layout);
      specs = fleet.specs;
      stop = fleet.stop;
    }
  } catch (err) {
    io.stderr.write(`gsindex simulate: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  if (jsonOut !== undefined) await writeFile(jsonOut, JSON.stringify({ layout, servers: specs }));
  io.stdout.write(
    `simulating ${specs.length} A2S servers (seed ${layout.seed}, ${layout.processes} process(es)); Ctrl-C stops\n${describeFleet(specs)}\n`,
  );
  if (jsonOut !== undefined) io.stdout.write(`fleet written to ${jsonOut}\n`);
  await waitForStopSignal();
  await stop();
  return 0;
}
