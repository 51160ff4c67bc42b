/**
 * One server record of the Steam Web API's IGameServersService/GetServerList/v1 (docs/list-sources.md), read leniently
 * (fields missing or of the wrong type become null; a record without a usable addr is skipped), and its
 * mapping to the normalised ServerStatus, so that a server is indexed before its own A2S answer arrives.
 *
 * Record fields: addr ("ip:query port"), gameport, steamid, name, appid, gamedir, version, product, region
 * (often -1), players, max_players, bots, map, secure, dedicated, os ("l", "w", "m"/"o"), gametype (tags).
 */
import type { ServerStatus } from "../status";
import type { ServerAddress } from "../types";
import { parseIpv4Address } from "./valve-master-codec";

export interface SteamWebApiServer {
  /** Where A2S queries go: the record's addr (IP and query port). */
  address: ServerAddress;
  gamePort: number | null;
  /** The record's region field (-1 when Steam does not know it). */
  region: number | null;
  /** Steam's product name (usually the game directory). */
  product: string | null;
  /** Steam Datagram Relay "fake IP" (169.254.0.0/16): listed, but cannot be queried directly. */
  sdrFakeIp: boolean;
  /** The record as ServerStatus, with what the Web API does not say left null or empty. */
  status: ServerStatus;
}

const str = (v: unknown): string | null =>
  typeof v === "string" ? v : typeof v === "number" ? String(v) : null;

const int = (v: unknown): number | null => {
  const n =
    typeof v === "number" ? v : typeof v === "string" && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isSafeInteger(n) ? n : null;
};

const bool = (v: unknown): boolean | null =>
  typeof v === "boolean" ? v : v === 1 || v === "1" ? true : v === 0 || v === "0" ? false : null;

function osOf(v: unknown): ServerStatus["os"] {
  switch (str(v)?.toLowerCase()) {
    case "l":
      return "linux";
    case "w":
      return "windows";
    case "m":
    case "o":
      return "mac";
    default:
      return null;
  }
}

/** Reads one record; null when it has no IPv4 addr with a port (nothing to index it under). */
export function readSteamWebApiRecord(record: unknown): SteamWebApiServer | null {
  if (typeof record !== "object" || record === null) return null;
  const r = record as Record<string, unknown>;
  let address: ServerAddress;
  try {
    address = parseIpv4Address(str(r.addr) ?? "");
  } catch {
    return null;
  }
  if (address.port === 0) return null;
  const raw: Record<string, string> = {};
  for (const [k, v] of Object.entries(r))
    if (v !== null && typeof v !== "object") raw[k] = String(v);
  const gamePort = int(r.gameport);
  const appId = int(r.appid);
  const status: ServerStatus = {
    protocol: "source",
    name: str(r.name) ?? "",
    map: str(r.map) ?? "",
    folder: str(r.gamedir),
    game: str(r.product),
    appId: appId !== null && appId >= 0 ? appId : null,
    gameId: null,
    players: Math.max(0, int(r.players) ?? 0),
    maxPlayers: Math.max(0, int(r.max_players) ?? 0),
    bots: int(r.bots),
    passwordProtected: null,
    vacSecured: bool(r.secure),
    dedicated: bool(r.dedicated),
    os: osOf(r.os),
    version: str(r.version),
    keywords: (str(r.gametype) ?? "").split(",").filter((tag) => tag !== ""),
    gamePort: gamePort !== null && gamePort > 0 && gamePort <= 65535 ? gamePort : null,
    steamId: str(r.steamid),
    playerList: [],
    rules: [],
    raw,
    pingMs: null,
  };
  return {
    address,
    gamePort: status.gamePort,
    region: int(r.region),
    product: str(r.product),
    sdrFakeIp: address.host.startsWith("169.254."),
    status,
  };
}
