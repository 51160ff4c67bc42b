/** Where a sampled or stored player count comes from (docs/data-truth.md). */
import type { ServerStatus } from "../../protocol";

/** game_server.players_source: where a server's player count comes from (prisma/schema.prisma, PlayerCountSource). */
export type PlayerCountSource =
  "A2S_INFO" | "A2S_PLAYER" | "MANAGEMENT" | "LEGACY_STATUS" | "STEAM_WEB_API";

/** A2S_INFO carries the player count in one byte. */
const A2S_INFO_MAX_PLAYERS = 255;

/**
 * The player count of a server's own answer and where it comes from: A2S_INFO's count, except that a
 * PLAYER list longer than INFO's one byte can hold is the better count (servers with more than 255
 * players); an older protocol's status answer as its adapter read it.
 */
export function answeredPlayerCount(
  status: Pick<ServerStatus, "protocol" | "players" | "playerList">,
): {
  players: number;
  source: PlayerCountSource;
} {
  if (status.protocol !== "source") return { players: status.players, source: "LEGACY_STATUS" };
  if (status.players >= A2S_INFO_MAX_PLAYERS && status.playerList.length > status.players)
    return { players: status.playerList.length, source: "A2S_PLAYER" };
  return { players: status.players, source: "A2S_INFO" };
}
