/**
 * The text form of an address list (a file or URL the operator provides, or options.addresses):
 * one game server per line, `#` comments and blank lines ignored.
 *
 *   [PROTOCOL] HOST:QUERYPORT [game=GAMEPORT]
 *   quake3 203.0.113.7:27960
 *   ase 203.0.113.8:22126 game=22003
 *   [2001:db8::1]:27015                  (no protocol: the source's options.protocol, else 'source')
 *
 * The port is always the QUERY port (what the crawler sends to); `game=` records the game port when
 * it differs. PROTOCOL may also be written as a scheme: `quake3://203.0.113.7:27960`.
 */
import { PROTOCOL_IDS, type ProtocolId } from "../../protocol";
import type { ListedServer } from "../list-source";

export function isProtocolId(text: string): text is ProtocolId {
  return (PROTOCOL_IDS as readonly string[]).includes(text);
}

/** "HOST:PORT" or "[IPv6]:PORT" (the port required, 1-65535), or null. */
export function parseHostPort(text: string): { host: string; port: number } | null {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:\s]+):(\d{1,5})$/.exec(text);
  if (!m) return null;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1] as string, port } : null;
}

/** One entry, or null when it cannot be read (the caller reports it). */
export function parseAddressListEntry(
  line: string,
  defaultProtocol: ProtocolId,
): ListedServer | null {
  let tokens = line.trim().split(/\s+/);
  let protocol = defaultProtocol;
  const scheme = /^([a-z0-9]+):\/\/(.+)$/.exec(tokens[0] ?? "");
  if (scheme) {
    if (!isProtocolId(scheme[1]!)) return null;
    protocol = scheme[1];
    tokens = [scheme[2]!, ...tokens.slice(1)];
  } else if (tokens.length > 1 && isProtocolId(tokens[0]!)) {
    protocol = tokens[0];
    tokens = tokens.slice(1);
  }
  const [address, ...extra] = tokens;
  const hp = parseHostPort(address ?? "");
  if (hp === null) return null;
  const server: ListedServer = { host: hp.host, queryPort: hp.port, protocol };
  for (const token of extra) {
    const game = /^game=(\d{1,5})$/.exec(token);
    if (!game || Number(game[1]) < 1 || Number(game[1]) > 65535) return null;
    server.gamePort = Number(game[1]);
  }
  return server;
}

/** Every entry of a list text; `bad` holds the lines that could not be read. */
export function parseAddressListText(
  text: string,
  defaultProtocol: ProtocolId,
): { servers: ListedServer[]; bad: string[] } {
  const servers: ListedServer[] = [];
  const bad: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") continue;
    const server = parseAddressListEntry(line, defaultProtocol);
    if (server) servers.push(server);
    else bad.push(line);
  }
  return { servers, bad };
}
