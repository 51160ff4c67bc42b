/**
 * `gsindex master`: list a Valve UDP master (default hl2master.steampowered.com:27011), or with
 * --steam-web-api the Steam Web API's GetServerList (key from STEAM_WEB_API_KEY, base URL from
 * STEAM_WEB_API_URL). Prints one address per line and the count on standard error, or with --json
 * {"servers":["ip:port",...],"complete":bool,"resumeFrom":"ip:port"|null}.
 */
import {
  DEFAULT_VALVE_MASTER_HOST,
  DEFAULT_VALVE_MASTER_PORT,
  isProtocolError,
  parseMasterFilter,
  MASTER_REGIONS,
  type MasterRegionName,
  formatAddress,
  masterRegionName,
  parseIpv4Address,
  listValveMaster,
} from "../../protocol";
import { defineCommand } from "../define-command";
import { onFirstStopSignal } from "../stop-signal";
import { type CommandIo, parseHostPort, processIo } from "./io";
import { type MasterCommandEnv, printListing } from "./master-listing";

const command = defineCommand({
  name: "master",
  usage: `usage: gsindex master [--host H:P] [--region all|${Object.keys(MASTER_REGIONS).join("|")}]
                      [--filter '\\gamedir\\cstrike'] [--seed IP:PORT] [--json] [--rate N]
                      [--timeout MS] [--retries N]
       gsindex master --steam-web-api [--filter ...] [--json] [--rate N] [--per-call N]
  --rate N     requests per minute (0 = unpaced; for simulators only)
  --per-call N the Web API's cap per call (default 10000; a simulator may cap lower)
  --seed       resume a listing where a previous one stopped (with --region all: add --start-region)
Environment for --steam-web-api: STEAM_WEB_API_KEY (required), STEAM_WEB_API_URL (base URL override).`,
  options: {
    host: { type: "string" },
    region: { type: "string", default: "all" },
    "start-region": { type: "string" },
    filter: { type: "string", default: "" },
    seed: { type: "string" },
    json: { type: "boolean", default: false },
    rate: { type: "string" },
    timeout: { type: "string" },
    retries: { type: "string" },
    "steam-web-api": { type: "boolean", default: false },
    "per-call": { type: "string" },
  },
});

function envFromProcess(): MasterCommandEnv {
  return {
    steamWebApiKey: process.env.STEAM_WEB_API_KEY,
    steamWebApiUrl: process.env.STEAM_WEB_API_URL,
  };
}

function regionCode(name: string, option: string): number | "all" {
  if (name === "all") return "all";
  if (name in MASTER_REGIONS) return MASTER_REGIONS[name as MasterRegionName];
  throw new Error(
    `${option} ${JSON.stringify(name)} is not one of all, ${Object.keys(MASTER_REGIONS).join(", ")}`,
  );
}

export async function runMaster(
  argv: string[],
  io: CommandIo,
  env: MasterCommandEnv,
): Promise<number> {
  const args = command.parse(argv, io);
  if (typeof args === "number") return args;
  const { values } = args;
  try {
    parseMasterFilter(values.filter); // a typo in --filter is reported here, not as an empty listing
    const number = (text: string | undefined, option: string): number | undefined => {
      if (text === undefined) return undefined;
      const n = Number(text);
      if (!Number.isFinite(n) || n < 0) throw new Error(`${option} must be a non-negative number`);
      return n;
    };
    const rate = number(values.rate, "--rate");
    const timeoutMs = number(values.timeout, "--timeout");
    const retries = number(values.retries, "--retries");
    const controller = new AbortController();
    // A stop request ends the listing early: what was listed is printed, with where to resume. Its
    // duplicate (a Ctrl-C reaches the process group and a wrapper forwards it) must not end the process
    // before that; a later, second request does, should the listing not stop.
    const stopListening = onFirstStopSignal(() => controller.abort());
    try {
      if (values["steam-web-api"]) {
        const { runSteamWebApiListing } =
          require("./master-steam") as typeof import("./master-steam");
        const limitPerCall = number(values["per-call"], "--per-call");
        return await runSteamWebApiListing({
          io,
          env,
          filter: values.filter,
          json: values.json,
          rate,
          timeoutMs,
          limitPerCall,
          signal: controller.signal,
        });
      }
      const { host, port } = parseHostPort(
        values.host ?? `${DEFAULT_VALVE_MASTER_HOST}:${DEFAULT_VALVE_MASTER_PORT}`,
        DEFAULT_VALVE_MASTER_PORT,
      );
      const region = regionCode(values.region, "--region");
      const startRegion =
        values["start-region"] === undefined
          ? undefined
          : regionCode(values["start-region"], "--start-region");
      const result = await listValveMaster({
        host,
        port,
        region,
        startRegion: startRegion === "all" ? undefined : startRegion,
        filter: values.filter,
        seed: values.seed === undefined ? undefined : parseIpv4Address(values.seed),
        pacing: rate === undefined ? undefined : rate === 0 ? false : { requestsPerMinute: rate },
        timeoutMs,
        retries,
        signal: controller.signal,
      });
      const resumeRegion =
        result.resumeRegion === null
          ? ""
          : (masterRegionName(result.resumeRegion) ?? String(result.resumeRegion));
      const hint =
        result.resumeFrom === null
          ? ""
          : `: ${result.stoppedBy?.message ?? "stopped"}; resume with --region ${region === "all" ? `all --start-region ${resumeRegion}` : resumeRegion} --seed ${formatAddress(result.resumeFrom)}`;
      printListing(
        io,
        values.json,
        {
          servers: result.servers.map(formatAddress),
          complete: result.complete,
          resumeFrom: result.resumeFrom && formatAddress(result.resumeFrom),
        },
        hint,
      );
      if (values.json && !result.complete) io.stderr.write(`gsindex master: incomplete${hint}\n`);
      return result.complete ? 0 : 3;
    } finally {
      stopListening();
    }
  } catch (err) {
    io.stderr.write(
      `gsindex master: ${isProtocolError(err) ? `${err.code}: ${err.message}` : (err as Error).message}\n`,
    );
    return isProtocolError(err) ? 1 : 2;
  }
}

export function run(argv: string[]): Promise<number> {
  return runMaster(argv, processIo, envFromProcess());
}
