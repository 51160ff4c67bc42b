/**
 * A management-server registration as the normalised ServerStatus (protocol 'bomberman'): the state is what
 * the game server reported; it is never queried. Mode and lobby go to `raw` under the protocol's own names.
 */
import type { ServerStatus } from "../status";
import type { ManagementServerEntry } from "./management-messages";

export const GAMEPLAY_MODE_NAMES = { 1: "Standard A", 2: "Standard A+B" } as const;

export function managementEntryToStatus(entry: ManagementServerEntry): ServerStatus {
  const raw: Record<string, string> = {};
  if (entry.isLobbyOpen !== null) raw.isLobbyOpen = String(entry.isLobbyOpen);
  if (entry.gameplayMode !== null) raw.gameplayMode = GAMEPLAY_MODE_NAMES[entry.gameplayMode];
  return {
    protocol: "bomberman",
    name: entry.name,
    map: "",
    folder: null,
    game: "Bomberman",
    appId: null,
    gameId: null,
    players: entry.players?.current ?? 0,
    maxPlayers: entry.players?.max ?? 0,
    bots: null,
    passwordProtected: null,
    vacSecured: null,
    dedicated: null,
    os: null,
    version: null,
    keywords: entry.gameplayMode === null ? [] : [GAMEPLAY_MODE_NAMES[entry.gameplayMode]],
    gamePort: entry.port,
    steamId: null,
    playerList: [],
    rules: [],
    raw,
    pingMs: null,
  };
}
