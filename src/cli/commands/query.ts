/**
 * `gsindex query HOST[:PORT] [--json] [--timeout MS] [--retries N]`: asks one game server for
 * A2S_INFO, A2S_PLAYER and A2S_RULES. Exit status 0 when INFO answered, 1 when it did not, 2 on
 * bad usage. The `--json` shape is a contract (issue 2):
 *   {"info":{...},"players":[...],"rules":[...],"pingMs":N}
 * with a failed part null and explained in "errors":{"players":{"code","message"}}.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import {
  extractProtocol,
  isLegacyCliProtocol,
  runLegacyQuery,
  sourceQueryArgv,
} from "./legacy-query";
import {
  DEFAULT_A2S_PORT,
  DEFAULT_TIMEOUT_MS,
  ProtocolError,
  QUERYABLE_PROTOCOL_IDS,
  queryServer,
  type ServerAddress,
  type ServerQueryPart,
  type ServerQueryResult,
} from "../../protocol";
import { defineCommand } from "../define-command";
import type { CommandIo } from "./io";

const USAGE = `usage: gsindex query HOST[:PORT] [--json] [--timeout MS] [--retries N]

Queries one game server over Valve A2S (info, players, rules).
  HOST        an IPv4 address, [IPv6] address or host name; PORT defaults to ${DEFAULT_A2S_PORT}
  --json      print {"info","players","rules","pingMs"} (failed parts null, explained in "errors")
  --timeout   milliseconds each part may take, challenge rounds and re-sends included (default ${DEFAULT_TIMEOUT_MS})
  --retries   re-sends of an unanswered request within that time (default 1)
  --protocol  ${QUERYABLE_PROTOCOL_IDS.join(" | ")} (source is the default)
              (PORT is the query port the API shows; see gsindex query --protocol quake3 --help)`;

const command = defineCommand({
  name: "query",
  usage: USAGE,
  options: { json: { type: "boolean" }, timeout: { type: "string" }, retries: { type: "string" } },
  allowPositionals: true,
});

/** Splits HOST[:PORT], [IPv6]:PORT, [IPv6] or a bare IPv6 literal. Throws INVALID_ARGUMENT. */
export function parseTarget(text: string): { host: string; port: number } {
  let host = text;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d*))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1] as string;
    portText = bracketed[2];
    if (isIP(host) !== 6)
      throw new ProtocolError("INVALID_ARGUMENT", `not an IPv6 address: [${host}]`);
  } else if (isIP(text) === 6) {
    host = text;
  } else if (text.includes(":")) {
    const at = text.lastIndexOf(":");
    host = text.slice(0, at);
    portText = text.slice(at + 1);
  }
  if (host === "") throw new ProtocolError("INVALID_ARGUMENT", `no host in '${text}'`);
  const port = portText === undefined ? DEFAULT_A2S_PORT : Number(portText);
  if (
    !Number.isInteger(port) ||
    port < 1 ||
    port > 65535 ||
    (portText !== undefined && !/^\d+$/.test(portText))
  ) {
    throw new ProtocolError("INVALID_ARGUMENT", `not a port: '${portText ?? ""}'`);
  }
  return { host, port };
}

/** The host the person typed, resolved once (names are fine here: a person asked for them). */
async function resolveTarget(target: { host: string; port: number }): Promise<ServerAddress> {
  if (isIP(target.host) !== 0) return target;
  try {
    const { address } = await lookup(target.host);
    return { host: address, port: target.port };
  } catch (err) {
    throw new ProtocolError(
      "NETWORK",
      `cannot resolve ${target.host}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

/** The JSON contract: decoded values as the codecs give them, GoldSrc extras merged into info. */
export function toJson(result: ServerQueryResult): Record<string, unknown> {
  let info: Record<string, unknown> | null = null;
  if (result.info) {
    info = { ...result.info.info };
    const goldSrc = result.info.goldSrc;
    if (goldSrc) {
      info.address = goldSrc.address;
      if (goldSrc.mod) info.mod = goldSrc.mod;
    }
  }
  const out: Record<string, unknown> = {
    info,
    players: result.players ? result.players.players : null,
    rules: result.rules ? result.rules.rules : null,
    pingMs: result.pingMs,
  };
  const truncated: Partial<Record<ServerQueryPart, true>> = {};
  if (result.players?.truncated) truncated.players = true;
  if (result.rules?.truncated) truncated.rules = true;
  if (Object.keys(truncated).length > 0) out.truncated = truncated;
  const errors = Object.entries(result.errors);
  if (errors.length > 0)
    out.errors = Object.fromEntries(
      errors.map(([part, e]) => [part, { code: e.code, message: e.message }]),
    );
  return out;
}

const SERVER_TYPES: Record<string, string> = { d: "dedicated", l: "listen", p: "SourceTV proxy" };
const ENVIRONMENTS: Record<string, string> = { l: "Linux", w: "Windows", m: "macOS", o: "macOS" };

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "-";
  const whole = Math.floor(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, "0")}m` : `${m}m${String(s).padStart(2, "0")}s`;
}

/** The readable form: a summary, then the players and the rules as tables. */
export function toTable(address: ServerAddress, result: ServerQueryResult): string {
  const lines: string[] = [];
  const where = address.host.includes(":")
    ? `[${address.host}]:${address.port}`
    : `${address.host}:${address.port}`;
  const info = result.info?.info;
  if (info) {
    const kind = SERVER_TYPES[info.serverType.toLowerCase()] ?? info.serverType;
    const os = ENVIRONMENTS[info.environment.toLowerCase()] ?? info.environment;
    const flags = [
      kind,
      os,
      info.vac ? "VAC" : "no VAC",
      info.visibility ? "password" : "public",
    ].join(", ");
    const appId = info.type === "source" ? `, app ${info.gameId ?? info.appId}` : "";
    lines.push(`Name     ${info.name}`);
    lines.push(`Address  ${where}   ping ${result.pingMs ?? "-"} ms`);
    lines.push(`Game     ${info.game} (${info.folder}${appId})`);
    lines.push(`Map      ${info.map}`);
    lines.push(
      `Players  ${info.players}/${info.maxPlayers}${info.bots ? ` (${info.bots} bots)` : ""}`,
    );
    lines.push(`Server   ${flags}`);
    if (info.type === "source") {
      lines.push(`Version  ${info.version}   protocol ${info.protocol}`);
      if (info.keywords) lines.push(`Keywords ${info.keywords}`);
      if (info.port !== undefined) lines.push(`Game port ${info.port}`);
    } else {
      lines.push(`Address  ${info.address} (as the server reports it)   protocol ${info.protocol}`);
    }
  } else {
    lines.push(`${where}: no answer to A2S_INFO`);
  }
  if (result.players) {
    const players = result.players.players;
    lines.push(
      "",
      `Players (${players.length}${result.players.truncated ? ", list truncated" : ""})`,
    );
    if (players.length > 0) {
      const width = Math.min(32, Math.max(4, ...players.map((p) => p.name.length)));
      lines.push(`  ${"Name".padEnd(width)}  ${"Score".padStart(6)}  ${"Time".padStart(8)}`);
      for (const p of players)
        lines.push(
          `  ${p.name.padEnd(width)}  ${String(p.score).padStart(6)}  ${formatDuration(p.duration).padStart(8)}`,
        );
    }
  }
  if (result.rules) {
    const rules = result.rules.rules;
    lines.push("", `Rules (${rules.length}${result.rules.truncated ? ", list truncated" : ""})`);
    const width = Math.min(40, Math.max(4, ...rules.map((r) => r.name.length)));
    for (const r of rules) lines.push(`  ${r.name.padEnd(width)}  ${r.value}`);
  }
  const errors = Object.entries(result.errors);
  if (errors.length > 0) {
    lines.push("");
    for (const [part, e] of errors) lines.push(`${part}: ${e.code}: ${e.message}`);
  }
  return lines.join("\n") + "\n";
}

export async function run(argv: string[], io: CommandIo = process): Promise<number> {
  // --protocol: the older protocols are served by legacy-query.ts; 'source' is this command.
  const selected = extractProtocol(argv);
  if (selected.protocol !== null) {
    if (isLegacyCliProtocol(selected.protocol))
      return runLegacyQuery(selected.protocol, selected.rest, io);
    if (selected.protocol !== "source") {
      io.stderr.write(`gsindex query: unknown protocol '${selected.protocol}'\n`);
      return 2;
    }
    argv = sourceQueryArgv(selected.rest);
  }
  const parsed = command.parse(argv, io);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    io.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const timeoutMs = values.timeout === undefined ? DEFAULT_TIMEOUT_MS : Number(values.timeout);
  const retries = values.retries === undefined ? undefined : Number(values.retries);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    io.stderr.write(`gsindex query: --timeout must be a positive number of milliseconds\n`);
    return 2;
  }
  if (retries !== undefined && (!Number.isInteger(retries) || retries < 0)) {
    io.stderr.write(`gsindex query: --retries must be a whole number >= 0\n`);
    return 2;
  }
  let address: ServerAddress;
  try {
    address = await resolveTarget(parseTarget(positionals[0] as string));
  } catch (err) {
    io.stderr.write(`gsindex query: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  let result: ServerQueryResult;
  try {
    result = await queryServer(
      address,
      retries === undefined ? { timeoutMs } : { timeoutMs, retries },
    );
  } catch (err) {
    io.stderr.write(`gsindex query: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  io.stdout.write(values.json ? `${JSON.stringify(toJson(result))}\n` : toTable(address, result));
  return result.info ? 0 : 1;
}
