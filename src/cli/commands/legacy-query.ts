/**
 * The `--protocol` branch of `gsindex query` and `gsindex decode` for the older protocols
 * (quake2, quake3, gamespy1, gamespy2, gamespy3, doom3, halflife, ase): kept apart from the A2S
 * commands, which call in here only when `--protocol` names one of these.
 *
 *   gsindex query HOST[:PORT] --protocol P [--game-port N | --query-port N] [--json] [--timeout MS] [--retries N]
 *     PORT is the QUERY port, the one the crawler stores and the API shows as queryPort (for ASE the
 *     game port + 123, for GameSpy v1 the game port + 1). --game-port N asks at the protocol's usual
 *     offset from a game port instead; without a port, the protocol's usual game's query port (games
 *     table, src/protocol/games.ts). Prints the normalised ServerStatus with its raw key/values beside it.
 *   gsindex decode --protocol P
 *     one reply per input line (its datagrams in hex, space-separated) → one JSON line
 *     {"status":{...},"raw":{...}} or {"error":{code,message,offset}}.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import {
  DEFAULT_TIMEOUT_MS,
  ProtocolError,
  QUERYABLE_PROTOCOL_IDS,
  decodeStatus,
  isProtocolError,
  protocolAdapter,
  queryPortOf,
  type LegacyProtocol,
  type ServerAddress,
  type ServerStatus,
} from "../../protocol";
import { defineCommand } from "../define-command";

/** Every protocol of the registry but A2S, which the A2S query and decode commands serve themselves. */
export const LEGACY_CLI_PROTOCOLS: readonly LegacyProtocol[] = QUERYABLE_PROTOCOL_IDS.filter(
  (id): id is LegacyProtocol => id !== "source",
);
const ALL_CLI_PROTOCOLS = QUERYABLE_PROTOCOL_IDS.join("|");

export function isLegacyCliProtocol(name: string): name is LegacyProtocol {
  return (LEGACY_CLI_PROTOCOLS as readonly string[]).includes(name);
}

/**
 * Finds `--protocol X` / `--protocol=X` in argv: the protocol (or null) and argv without it.
 * The A2S commands call this first and delegate here when it names a legacy protocol.
 */
export function extractProtocol(argv: readonly string[]): {
  protocol: string | null;
  rest: string[];
} {
  const rest: string[] = [];
  let protocol: string | null = null;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === "--protocol") {
      protocol = argv[i + 1] ?? "";
      i += 1;
    } else if (arg.startsWith("--protocol=")) {
      protocol = arg.slice("--protocol=".length);
    } else {
      rest.push(arg);
    }
  }
  return { protocol, rest };
}

/**
 * For `--protocol source`: argv for the A2S query command, with `--query-port N` (or `--game-port N`)
 * folded into HOST:PORT (for Source the query port is the game port unless told otherwise).
 */
export function sourceQueryArgv(rest: readonly string[]): string[] {
  const out: string[] = [];
  let queryPort: string | null = null;
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i]!;
    // A2S answers at the game port: --game-port and --query-port name the same port.
    if (arg === "--query-port" || arg === "--game-port") {
      queryPort = rest[i + 1] ?? "";
      i += 1;
    } else if (arg.startsWith("--query-port=") || arg.startsWith("--game-port="))
      queryPort = arg.slice(arg.indexOf("=") + 1);
    else out.push(arg);
  }
  if (queryPort === null) return out;
  return out.map((arg) => {
    if (arg.startsWith("-")) return arg;
    const { host } = splitHostPort(arg);
    return `${host.includes(":") ? `[${host}]` : host}:${queryPort}`;
  });
}

function splitHostPort(text: string): { host: string; port: number | null } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed)
    return { host: bracketed[1]!, port: bracketed[2] === undefined ? null : Number(bracketed[2]) };
  if (isIP(text) === 6) return { host: text, port: null };
  const at = text.lastIndexOf(":");
  if (at < 0) return { host: text, port: null };
  const portText = text.slice(at + 1);
  if (!/^\d{1,5}$/.test(portText))
    throw new ProtocolError("INVALID_ARGUMENT", `not a port: '${portText}'`);
  return { host: text.slice(0, at), port: Number(portText) };
}

function checkPort(port: number, what: string): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new ProtocolError("INVALID_ARGUMENT", `${what} must be 1-65535, got ${port}`);
  return port;
}

/** The person asked for this host by name: resolve it once. */
async function resolveHost(host: string): Promise<string> {
  if (isIP(host) !== 0) return host;
  try {
    return (await lookup(host)).address;
  } catch (err) {
    throw new ProtocolError(
      "NETWORK",
      `cannot resolve ${host}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

/** {"status":{...},"raw":{...}}: the normalised result with its raw key/values beside it. */
export function statusJson(status: ServerStatus): Record<string, unknown> {
  const { raw, ...rest } = status;
  return {
    status: { ...rest, playerList: rest.playerList.map(({ raw: _raw, ...p }) => p) },
    raw: raw ?? {},
    playersRaw: status.playerList.map((p) => p.raw ?? {}),
  };
}

export function statusTable(address: ServerAddress, status: ServerStatus): string {
  const where = address.host.includes(":")
    ? `[${address.host}]:${address.port}`
    : `${address.host}:${address.port}`;
  const lines = [
    `Name     ${status.name}`,
    `Address  ${where} (${status.protocol})   ping ${status.pingMs ?? "-"} ms${status.partial ? "   PARTIAL reply" : ""}`,
    `Game     ${status.game ?? "-"}${status.folder ? ` (${status.folder})` : ""}`,
    `Map      ${status.map}`,
    `Players  ${status.players}/${status.maxPlayers}${status.bots ? ` (${status.bots} bots)` : ""}`,
    `Password ${status.passwordProtected === null ? "-" : status.passwordProtected ? "yes" : "no"}`,
  ];
  if (status.version) lines.push(`Version  ${status.version}`);
  const players = status.playerList;
  lines.push("", `Players (${players.length})`);
  if (players.length > 0) {
    const width = Math.min(32, Math.max(4, ...players.map((p) => p.name.length)));
    lines.push(`  ${"Name".padEnd(width)}  ${"Score".padStart(6)}  ${"Ping".padStart(5)}  Team`);
    for (const p of players)
      lines.push(
        `  ${p.name.padEnd(width)}  ${String(p.score ?? "-").padStart(6)}  ${String(p.pingMs ?? "-").padStart(5)}  ${p.team ?? ""}`,
      );
  }
  const raw = Object.entries(status.raw ?? {});
  lines.push("", `Raw (${raw.length} keys, as sent)`);
  const width = Math.min(40, Math.max(4, ...raw.map(([k]) => k.length)));
  for (const [k, v] of raw) lines.push(`  ${k.padEnd(width)}  ${JSON.stringify(v)}`);
  return lines.join("\n") + "\n";
}

export interface LegacyCommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

const QUERY_USAGE = `usage: gsindex query HOST[:PORT] --protocol ${ALL_CLI_PROTOCOLS} [--game-port N | --query-port N] [--json] [--timeout MS] [--retries N]

  PORT          the query port, as the API shows it (queryPort); default: the protocol's usual one
  --game-port   ask at the query port derived from this game port (ASE +123, GameSpy v1 +1)
  --query-port  where to send the query, whatever PORT says (e.g. BF2 29900, MOHAA game+97)
  --json        print {"status":{...},"raw":{...},"playersRaw":[...]}`;

const queryCommand = defineCommand({
  name: "query",
  usage: QUERY_USAGE,
  options: {
    json: { type: "boolean" },
    timeout: { type: "string" },
    retries: { type: "string" },
    "query-port": { type: "string" },
    "game-port": { type: "string" },
  },
  allowPositionals: true,
});

export async function runLegacyQuery(
  protocol: LegacyProtocol,
  argv: string[],
  io: LegacyCommandIo = process,
): Promise<number> {
  const parsed = queryCommand.parse(argv, io);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const timeoutMs = values.timeout === undefined ? DEFAULT_TIMEOUT_MS : Number(values.timeout);
  const retries = values.retries === undefined ? undefined : Number(values.retries);
  if (
    positionals.length !== 1 ||
    !Number.isFinite(timeoutMs) ||
    timeoutMs <= 0 ||
    (retries !== undefined && (!Number.isInteger(retries) || retries < 0))
  ) {
    io.stderr.write(`${QUERY_USAGE}\n`);
    return 2;
  }
  const adapter = protocolAdapter(protocol);
  let address: ServerAddress;
  try {
    const target = splitHostPort(positionals[0]!);
    // The port the crawler stores and the API shows is the query port: take it as it is.
    let queryPort =
      target.port === null ? queryPortOf(adapter.defaultGame) : checkPort(target.port, "PORT");
    if (values["game-port"] !== undefined)
      queryPort = adapter.defaultQueryPort(checkPort(Number(values["game-port"]), "--game-port"));
    if (values["query-port"] !== undefined)
      queryPort = checkPort(Number(values["query-port"]), "--query-port");
    address = {
      host: await resolveHost(target.host),
      port: checkPort(queryPort, "the query port"),
    };
  } catch (err) {
    io.stderr.write(`gsindex query: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  try {
    const status = await adapter.queryStatus(
      address,
      retries === undefined ? { timeoutMs } : { timeoutMs, retries },
    );
    io.stdout.write(
      values.json ? `${JSON.stringify(statusJson(status))}\n` : statusTable(address, status),
    );
    return 0;
  } catch (err) {
    const code = isProtocolError(err) ? err.code : "INTERNAL";
    io.stderr.write(
      `gsindex query: ${address.host}:${address.port} (${protocol}): ${code}: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return 1;
  }
}

export interface LegacyDecodeIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

/** `gsindex decode --protocol P`: one reply per line (hex datagrams, space-separated) → one JSON line. */
export async function runLegacyDecode(
  protocol: LegacyProtocol,
  argv: string[],
  io: LegacyDecodeIo,
): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.stdout.write(
      `usage: gsindex decode --protocol ${ALL_CLI_PROTOCOLS}\n\nOne reply per input line: its datagrams in hex, space-separated, any order.\nPrints {"status":{...},"raw":{...},"playersRaw":[...]} or {"error":{"code","message","offset"}} per line.\n`,
    );
    return 0;
  }
  if (argv.length > 0) {
    io.stderr.write(
      `gsindex decode: unexpected arguments with --protocol ${protocol}: ${argv.join(" ")}\n`,
    );
    return 2;
  }
  let failed = false;
  for await (const line of createInterface({ input: io.stdin, crlfDelay: Infinity })) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    let out: string;
    try {
      const packets = line
        .trim()
        .split(/\s+/)
        .map((token, i) => {
          if (!/^(?:[0-9a-fA-F]{2})+$/.test(token))
            throw new ProtocolError(
              "INVALID_ARGUMENT",
              `datagram ${i + 1} is not an even-length hex string`,
            );
          return Buffer.from(token, "hex");
        });
      out = JSON.stringify(statusJson(decodeStatus(protocol, packets)));
    } catch (err) {
      failed = true;
      const error = isProtocolError(err)
        ? { code: err.code, message: err.message, offset: err.offset ?? null }
        : {
            code: "INTERNAL",
            message: err instanceof Error ? err.message : String(err),
            offset: null,
          };
      out = JSON.stringify({ error });
    }
    io.stdout.write(out + "\n");
  }
  return failed ? 1 : 0;
}
