/**
 * `gsindex management serve [--host H] [--port N]`: run gsindex's JSON-over-TCP management server alone.
 * `gsindex management list HOST[:PORT] [--json] [--timeout MS]`: print a remote management server's list;
 * with --json, the `content` of its msRQueryGameServers answer (numeric strings normalised to numbers).
 */
import { MANAGEMENT_SERVER_PORT, isProtocolError, queryManagementServer } from "../../protocol";
import { defineCommand } from "../define-command";
import { waitForStopSignal } from "../stop-signal";
import { type CommandIo, parseHostPort, processIo } from "./io";

const USAGE = `usage: gsindex management serve [--host H] [--port N]      (default 0.0.0.0:${MANAGEMENT_SERVER_PORT})
       gsindex management list HOST[:PORT] [--json] [--timeout MS]`;

const serveCommand = defineCommand({
  name: "management serve",
  usage: USAGE,
  options: {
    host: { type: "string", default: "0.0.0.0" },
    port: { type: "string", default: String(MANAGEMENT_SERVER_PORT) },
  },
});

const listCommand = defineCommand({
  name: "management list",
  usage: USAGE,
  options: { json: { type: "boolean", default: false }, timeout: { type: "string" } },
  allowPositionals: true,
});

async function serve(argv: string[], io: CommandIo): Promise<number> {
  const args = serveCommand.parse(argv, io);
  if (typeof args === "number") return args;
  const { values } = args;
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error("--port must be 0-65535");
  const { createLogger } = require("../../shared/logger") as typeof import("../../shared/logger");
  const { ManagementServer } =
    require("../../management/management-server") as typeof import("../../management/management-server");
  const logger = createLogger("info", "management");
  const server = await ManagementServer.start({ host: values.host, port, logger });
  io.stderr.write(`management server listening on ${server.address.host}:${server.address.port}\n`);
  await waitForStopSignal();
  await server.close();
  return 0;
}

async function list(argv: string[], io: CommandIo): Promise<number> {
  const args = listCommand.parse(argv, io);
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  if (positionals.length !== 1) throw new Error("list needs exactly one HOST[:PORT]");
  const { host, port } = parseHostPort(positionals[0] ?? "", MANAGEMENT_SERVER_PORT);
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutMs !== undefined && !(timeoutMs > 0))
    throw new Error("--timeout must be a positive number of milliseconds");
  const reply = await queryManagementServer({ host, port, timeoutMs });
  if (values.json) {
    io.stdout.write(JSON.stringify({ servers: reply.servers }) + "\n");
  } else {
    for (const s of reply.servers) {
      const address = s.address.includes(":")
        ? `[${s.address}]:${s.port}`
        : `${s.address}:${s.port}`;
      const players = s.players ? `${s.players.current}/${s.players.max}` : "?/?";
      const lobby = s.isLobbyOpen === null ? "" : s.isLobbyOpen ? " lobby open" : " in game";
      const mode =
        s.gameplayMode === null ? "" : s.gameplayMode === 1 ? " Standard A" : " Standard A+B";
      io.stdout.write(`${address}\t${players}${lobby}${mode}\t${s.name}\n`);
    }
    io.stderr.write(
      `${reply.servers.length} servers${reply.skipped > 0 ? ` (${reply.skipped} unreadable entries skipped)` : ""}\n`,
    );
  }
  return 0;
}

export async function runManagement(argv: string[], io: CommandIo): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === "serve") return await serve(rest, io);
    if (sub === "list") return await list(rest, io);
    if (sub === "--help" || sub === "-h") {
      io.stdout.write(USAGE + "\n");
      return 0;
    }
    io.stderr.write(USAGE + "\n");
    return 2;
  } catch (err) {
    io.stderr.write(
      `gsindex management: ${isProtocolError(err) ? `${err.code}: ${err.message}` : (err as Error).message}\n`,
    );
    return isProtocolError(err) ? 1 : 2;
  }
}

export function run(argv: string[]): Promise<number> {
  return runManagement(argv, processIo);
}
