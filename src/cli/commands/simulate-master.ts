/**
 * `gsindex simulate-master`: a simulated Valve UDP master (and, with --steam-web-api-port, a simulated Steam
 * Web API) over a fleet, on loopback, until interrupted. The fleet is `gsindex simulate --json-out FILE`'s
 * (--fleet FILE), or generated like it (--servers N --seed S). Point `gsindex master --host` (or
 * STEAM_WEB_API_URL with `gsindex master --steam-web-api`) at it.
 */
import { readFile } from "node:fs/promises";
import type { SimServerSpec } from "../../simulator/fleet-spec";
import { makeFleet } from "../../simulator/make-fleet";
import {
  REAL_MASTER_RATE_LIMIT,
  type SimMasterRateLimit,
  startSimValveMaster,
} from "../../simulator/master";
import { startSimSteamWebApi } from "../../simulator/steam-web-api";
import { defineCommand } from "../define-command";
import { waitForStopSignal } from "../stop-signal";
import { type CommandIo, processIo } from "./io";

const command = defineCommand({
  name: "simulate-master",
  usage: `usage: gsindex simulate-master [--servers N] [--seed S] [--fleet FILE] [--host H] [--port P]
                               [--rate-limit PACKETS/WINDOW_MS/SILENCE_MS | --rate-limit off]
                               [--steam-web-api-port P --steam-web-api-key KEY] [--per-call N]
  --servers      fleet size when no --fleet is given (default 1000), generated like gsindex simulate's
  --fleet        the JSON file gsindex simulate --json-out wrote (its "servers" list)
  --port         UDP port of the master (default 27011)
  --rate-limit   per source IP (default ${REAL_MASTER_RATE_LIMIT.packetsPerWindow}/${REAL_MASTER_RATE_LIMIT.windowMs}/${REAL_MASTER_RATE_LIMIT.silenceMs}, like the real master)
  --steam-web-api-port   also serve GetServerList on http://HOST:P (key required)
  --per-call     the Web API's cap per call (default 10000)`,
  options: {
    servers: { type: "string" },
    seed: { type: "string" },
    fleet: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string" },
    "rate-limit": { type: "string" },
    "steam-web-api-port": { type: "string" },
    "steam-web-api-key": { type: "string" },
    "per-call": { type: "string" },
  },
});

function whole(text: string | undefined, name: string, fallback: number, min = 0): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`--${name} must be a whole number >= ${min}`);
  return n;
}

function parseRateLimit(text: string | undefined): SimMasterRateLimit | false {
  if (text === undefined) return REAL_MASTER_RATE_LIMIT;
  if (text === "off") return false;
  const parts = text.split("/").map(Number);
  const [packetsPerWindow, windowMs, silenceMs] = parts;
  if (
    parts.length !== 3 ||
    !parts.every((n) => Number.isInteger(n) && n > 0) ||
    packetsPerWindow === undefined ||
    windowMs === undefined ||
    silenceMs === undefined
  ) {
    throw new Error(
      "--rate-limit must be PACKETS/WINDOW_MS/SILENCE_MS (e.g. 30/60000/60000) or off",
    );
  }
  return { packetsPerWindow, windowMs, silenceMs };
}

/** The generated fleet: up to 10,000 ports per loopback address, 127.0.0.1 onwards. */
export function generatedFleet(count: number, seed: number): SimServerSpec[] {
  const perHost = 10_000;
  const hosts = Array.from(
    { length: Math.max(1, Math.ceil(count / perHost)) },
    (_, i) => `127.0.${(i + 1) >> 8}.${(i + 1) & 255}`,
  );
  return makeFleet({ count, seed, hosts, serversPerHost: Math.min(count, perHost) || 1 });
}

export async function runSimulateMaster(
  argv: string[],
  io: CommandIo,
  until: () => Promise<unknown>,
): Promise<number> {
  const args = command.parse(argv, io);
  if (typeof args === "number") return args;
  const { values } = args;
  try {
    let fleet: SimServerSpec[];
    if (values.fleet !== undefined) {
      const parsed = JSON.parse(await readFile(values.fleet, "utf8")) as
        { servers?: SimServerSpec[] } | SimServerSpec[];
      fleet = Array.isArray(parsed) ? parsed : (parsed.servers ?? []);
    } else {
      fleet = generatedFleet(
        whole(values.servers, "servers", 1000, 1),
        whole(values.seed, "seed", 1),
      );
    }
    const master = await startSimValveMaster({
      fleet,
      host: values.host,
      port: whole(values.port, "port", 27011),
      rateLimit: parseRateLimit(values["rate-limit"]),
    });
    io.stderr.write(
      `simulated master on ${master.address.host}:${master.address.port} listing ${fleet.length} servers\n`,
    );
    let api: Awaited<ReturnType<typeof startSimSteamWebApi>> | null = null;
    if (values["steam-web-api-port"] !== undefined) {
      const key = values["steam-web-api-key"];
      if (!key) throw new Error("--steam-web-api-port needs --steam-web-api-key");
      api = await startSimSteamWebApi({
        fleet,
        key,
        host: values.host,
        port: whole(values["steam-web-api-port"], "steam-web-api-port", 0),
        maxPerCall: whole(values["per-call"], "per-call", 10_000, 1),
      });
      io.stderr.write(`simulated Steam Web API on ${api.baseUrl} (set STEAM_WEB_API_URL to it)\n`);
    }
    await until();
    await api?.close();
    await master.close();
    return 0;
  } catch (err) {
    io.stderr.write(`gsindex simulate-master: ${(err as Error).message}\n`);
    return 1;
  }
}

export function run(argv: string[]): Promise<number> {
  return runSimulateMaster(argv, processIo, waitForStopSignal);
}
