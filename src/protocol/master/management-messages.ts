/**
 * The Bomberman management server protocol (its `management-server.md`; docs/list-sources.md): JSON objects
 * `{ "command": ..., "content"?: ... }`, one per line (UTF-8, '\n'-terminated), TCP port 51963.
 *
 *   msRegisterGameServer    content { serverName (non-empty), serverAddress (IPv4 | IPv6 | host name), serverPort }
 *   msUpdateGameServerStats content { players { current (0-max), max (2-4) }, isLobbyOpen (boolean), gameplayMode (1 | 2) }
 *   msUnregisterGameServer  no content
 *   msQueryGameServers      no content; answered by msRQueryGameServers { servers: [{ name, address, port,
 *                           players { current, max }, isLobbyOpen, gameplayMode }] }
 *
 * Rules kept exactly: serverPort 1-65535 and never 51963 (nor the listening port, which the server adds); an
 * address that looks like an IP but is not a valid one is refused.
 * Deviation (issue 12): a game server's own stats must hold 0 <= current <= max, max 2-4; the protocol document let
 * current exceed max (a queue), which let one registration report 99,999,999 players. A remote list is read as it is
 * (the protocol document's own example answer reports 22 of 4) but a count above MAX_REPORTED_PLAYERS drops the entry's
 * stats.
 * Deviation accepted: the protocol document's own reply examples send players.current as a string ("22"), so numeric
 * strings are read as numbers for players.current / players.max (and, in replies only, port / gameplayMode).
 * Parsing is pure: no sockets, no logger; invalid input is a reason, never an exception.
 */
import ipaddr from "ipaddr.js";
import { MANAGEMENT_SERVER_PORT } from "../defaults";

export const MS_REGISTER_GAME_SERVER = "msRegisterGameServer";
export const MS_UPDATE_GAME_SERVER_STATS = "msUpdateGameServerStats";
export const MS_UNREGISTER_GAME_SERVER = "msUnregisterGameServer";
export const MS_QUERY_GAME_SERVERS = "msQueryGameServers";
export const MS_R_QUERY_GAME_SERVERS = "msRQueryGameServers";

export type GameplayMode = 1 | 2;

export interface ManagementPlayers {
  current: number;
  /** 2, 3 or 4. */
  max: number;
}

export interface ManagementRegistration {
  serverName: string;
  serverAddress: string;
  serverPort: number;
}

export interface ManagementStats {
  players: ManagementPlayers;
  isLobbyOpen: boolean;
  /** 1 = "Standard A", 2 = "Standard A+B". */
  gameplayMode: GameplayMode;
}

export type ManagementRequest =
  | { command: typeof MS_REGISTER_GAME_SERVER; content: ManagementRegistration }
  | { command: typeof MS_UPDATE_GAME_SERVER_STATS; content: ManagementStats }
  | { command: typeof MS_UNREGISTER_GAME_SERVER }
  | { command: typeof MS_QUERY_GAME_SERVERS };

/** One server of an msRQueryGameServers list. Stats are null until the game server has reported them. */
export interface ManagementServerEntry {
  name: string;
  address: string;
  port: number;
  players: ManagementPlayers | null;
  isLobbyOpen: boolean | null;
  gameplayMode: GameplayMode | null;
}

export type ManagementRefusal = "INVALID_JSON" | "UNKNOWN_COMMAND" | "INVALID_CONTENT";

export type ManagementParseResult =
  | { ok: true; request: ManagementRequest }
  | { ok: false; refusal: ManagementRefusal; detail: string };

export type ServerAddressKind = "ipv4" | "ipv6" | "hostname";

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * What a registered address is, or null when invalid. Never resolves anything: a host name is text.
 * Digits-and-dots, or anything with a ':', looks like an IP and must then be a valid one.
 */
export function classifyServerAddress(text: string): ServerAddressKind | null {
  if (text.includes(":")) return ipaddr.IPv6.isValid(text) ? "ipv6" : null;
  if (/^[0-9.]+$/.test(text)) return ipaddr.IPv4.isValidFourPartDecimal(text) ? "ipv4" : null;
  const name = text.endsWith(".") ? text.slice(0, -1) : text;
  if (name.length === 0 || name.length > 253) return null;
  const labels = name.split(".");
  if (!labels.every((label) => LABEL.test(label))) return null;
  // An all-numeric last label ("10.0.0.x1" aside) is not a host name: it is a mistyped IP.
  return /^\d+$/.test(labels[labels.length - 1] ?? "") ? null : "hostname";
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** An integer, or a string of decimal digits when `numericStrings` (the protocol document's replies send "22"). */
function integer(v: unknown, numericStrings: boolean): number | null {
  if (typeof v === "number") return Number.isSafeInteger(v) ? v : null;
  if (numericStrings && typeof v === "string" && /^\s*\d{1,15}\s*$/.test(v)) return Number(v);
  return null;
}

function validPort(port: number | null, forbiddenPorts: readonly number[]): port is number {
  return port !== null && port >= 1 && port <= 65535 && !forbiddenPorts.includes(port);
}

/**
 * The most players a remote list may report for one server: a byte, as every query protocol gsindex speaks
 * counts them (A2S, Quake 3, ASE), far above the protocol's own maximum of 4. Anything above is not a game server's
 * count.
 */
export const MAX_REPORTED_PLAYERS = 255;

/**
 * A game server's own stats: 0 <= current <= max, max 2-4. `remote`: a remote list is read as it is (max outside
 * 2-4, current above max), within MAX_REPORTED_PLAYERS.
 */
function readPlayers(v: unknown, remote = false): ManagementPlayers | string {
  if (!isObject(v)) return "players must be an object";
  const current = integer(v.current, true);
  const max = integer(v.max, true);
  if (current === null || current < 0) return "players.current must be a non-negative integer";
  if (remote) {
    if (max === null || max < 0 || max > MAX_REPORTED_PLAYERS || current > MAX_REPORTED_PLAYERS)
      return `players must be 0-${MAX_REPORTED_PLAYERS}`;
    return { current, max };
  }
  if (max === null || max < 2 || max > 4) return "players.max must be 2, 3 or 4";
  if (current > max) return "players.current must not exceed players.max";
  return { current, max };
}

function readGameplayMode(v: unknown, numericStrings: boolean): GameplayMode | null {
  const mode = integer(v, numericStrings);
  return mode === 1 || mode === 2 ? mode : null;
}

const refuse = (refusal: ManagementRefusal, detail: string): ManagementParseResult => ({
  ok: false,
  refusal,
  detail,
});

export interface ManagementParseRules {
  /** Ports a registration may not use. @defaultValue [51963] */
  forbiddenPorts?: readonly number[];
  /** Longest serverName accepted, in characters. @defaultValue 256 */
  maxNameLength?: number;
}

/** Parses and validates one line a client or game server sent. */
export function parseManagementRequest(
  line: string,
  rules: ManagementParseRules = {},
): ManagementParseResult {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return refuse("INVALID_JSON", "not JSON");
  }
  if (!isObject(message) || typeof message.command !== "string")
    return refuse("INVALID_JSON", 'not an object with a string "command"');
  const content = message.content;
  switch (message.command) {
    case MS_REGISTER_GAME_SERVER: {
      if (!isObject(content)) return refuse("INVALID_CONTENT", "content must be an object");
      const { serverName, serverAddress } = content;
      const serverPort = integer(content.serverPort, false);
      if (typeof serverName !== "string" || serverName.trim() === "")
        return refuse("INVALID_CONTENT", "serverName must be a non-empty string");
      if (serverName.length > (rules.maxNameLength ?? 256))
        return refuse("INVALID_CONTENT", "serverName is too long");
      if (typeof serverAddress !== "string" || classifyServerAddress(serverAddress) === null)
        return refuse(
          "INVALID_CONTENT",
          "serverAddress must be an IPv4 or IPv6 address or a host name",
        );
      if (!validPort(serverPort, rules.forbiddenPorts ?? [MANAGEMENT_SERVER_PORT]))
        return refuse(
          "INVALID_CONTENT",
          "serverPort must be an integer 1-65535 other than the management port",
        );
      return {
        ok: true,
        request: {
          command: MS_REGISTER_GAME_SERVER,
          content: { serverName, serverAddress, serverPort },
        },
      };
    }
    case MS_UPDATE_GAME_SERVER_STATS: {
      if (!isObject(content)) return refuse("INVALID_CONTENT", "content must be an object");
      const players = readPlayers(content.players);
      if (typeof players === "string") return refuse("INVALID_CONTENT", players);
      if (typeof content.isLobbyOpen !== "boolean")
        return refuse("INVALID_CONTENT", "isLobbyOpen must be true or false");
      const gameplayMode = readGameplayMode(content.gameplayMode, false);
      if (gameplayMode === null) return refuse("INVALID_CONTENT", "gameplayMode must be 1 or 2");
      return {
        ok: true,
        request: {
          command: MS_UPDATE_GAME_SERVER_STATS,
          content: { players, isLobbyOpen: content.isLobbyOpen, gameplayMode },
        },
      };
    }
    case MS_UNREGISTER_GAME_SERVER:
      return { ok: true, request: { command: MS_UNREGISTER_GAME_SERVER } };
    case MS_QUERY_GAME_SERVERS:
      return { ok: true, request: { command: MS_QUERY_GAME_SERVERS } };
    default:
      return refuse(
        "UNKNOWN_COMMAND",
        `unknown command ${JSON.stringify(message.command.slice(0, 64))}`,
      );
  }
}

/** The msRQueryGameServers line (with its '\n'). Stats a game server has not reported yet are left out. */
export function encodeQueryGameServersReply(servers: readonly ManagementServerEntry[]): string {
  const list = servers.map((s) => ({
    name: s.name,
    address: s.address,
    port: s.port,
    ...(s.players === null ? {} : { players: { current: s.players.current, max: s.players.max } }),
    ...(s.isLobbyOpen === null ? {} : { isLobbyOpen: s.isLobbyOpen }),
    ...(s.gameplayMode === null ? {} : { gameplayMode: s.gameplayMode }),
  }));
  return JSON.stringify({ command: MS_R_QUERY_GAME_SERVERS, content: { servers: list } }) + "\n";
}

export interface QueryGameServersReply {
  servers: ManagementServerEntry[];
  /** Entries without a usable name, address or port. */
  skipped: number;
}

/**
 * Reads a remote msRQueryGameServers message leniently: numeric strings are numbers, missing or invalid stats
 * are null, an entry without a usable name, address or port is skipped. null when it is not that message.
 */
export function readQueryGameServersReply(message: unknown): QueryGameServersReply | null {
  if (!isObject(message) || message.command !== MS_R_QUERY_GAME_SERVERS) return null;
  const content = message.content;
  const list = isObject(content) ? content.servers : undefined;
  if (!Array.isArray(list))
    return isObject(content) && content.servers === undefined ? { servers: [], skipped: 0 } : null;
  const servers: ManagementServerEntry[] = [];
  let skipped = 0;
  for (const item of list) {
    const port = isObject(item) ? integer(item.port, true) : null;
    if (
      !isObject(item) ||
      typeof item.name !== "string" ||
      typeof item.address !== "string" ||
      classifyServerAddress(item.address) === null ||
      !validPort(port, [])
    ) {
      skipped++;
      continue;
    }
    const players = readPlayers(item.players, true);
    servers.push({
      name: item.name,
      address: item.address,
      port,
      players: typeof players === "string" ? null : players,
      isLobbyOpen: typeof item.isLobbyOpen === "boolean" ? item.isLobbyOpen : null,
      gameplayMode: readGameplayMode(item.gameplayMode, true),
    });
  }
  return { servers, skipped };
}
