/**
 * Inflated player counts: the rules that read one answer (what the querier returned for one server) and
 * say which tell-tales of fake players it shows. The cross-server rule (the same names on many servers at
 * once) and the port-farm rule need every server and run at a crawl's close (store/crawl-store.ts
 * finishCrawl). Each rule and its threshold: docs/fake-players.md.
 */
import type { ServerStatus } from "../protocol";

/** Why a server is a suspected fake; the names are the database enum's and the API's. */
export type FakeReason =
  | "PORT_FARM"
  | "PLAYERS_ABOVE_MAX"
  | "INFO_ABOVE_PLAYER_LIST"
  | "SAME_NAME_PLAYERS"
  | "ZERO_DURATION_PLAYERS"
  | "SHARED_PLAYER_NAMES";

/**
 * A name on more servers than this at once is generic ("Player", a game's default name) and says nothing
 * about any of them; leaving it out also bounds the pairs the shared-names rule compares.
 */
export const GENERIC_NAME_SERVERS = 200;

/** Reasons set at a crawl's close: an answer leaves them as they are. */
export const CLOSE_TIME_REASONS: readonly FakeReason[] = ["PORT_FARM", "SHARED_PLAYER_NAMES"];

/** Thresholds of the player-count rules (0 switches a rule off). Config keys FAKE_* (src/shared/config.ts). */
export interface FakePlayerRules {
  /** INFO_ABOVE_PLAYER_LIST: the INFO count exceeds the (non-empty) PLAYER list by at least this many, and is at least twice its length. */
  infoExcess: number;
  /** SAME_NAME_PLAYERS: at least this many players beyond the reported bots share one non-empty name. */
  sameNamePlayers: number;
  /** ZERO_DURATION_PLAYERS: at least this many players, and at least half the list, connected for 0 seconds. */
  zeroDurationPlayers: number;
  /** SHARED_PLAYER_NAMES: this many servers at once (the server itself included) have the same names (below 2: off). */
  sharedNameServers: number;
  /** SHARED_PLAYER_NAMES: how many of the server's names (beyond its reported bots, and at least half its list) another server must have. */
  sharedNamesPerServer: number;
}

/** The defaults of the FAKE_* config keys. */
export const DEFAULT_FAKE_PLAYER_RULES: FakePlayerRules = Object.freeze({
  infoExcess: 8,
  sameNamePlayers: 5,
  zeroDurationPlayers: 5,
  sharedNameServers: 3,
  sharedNamesPerServer: 5,
});

/** The single-answer rules that fire for `status`, in a stable order. */
export function answerFakeReasons(
  status: Pick<ServerStatus, "players" | "maxPlayers" | "bots" | "playerList">,
  rules: FakePlayerRules,
): FakeReason[] {
  const reasons: FakeReason[] = [];
  const list = status.playerList;
  const bots = status.bots ?? 0;
  // maxPlayers 0: the server did not say (some older protocols), not a full server.
  if (status.maxPlayers > 0 && status.players > status.maxPlayers)
    reasons.push("PLAYERS_ABOVE_MAX");
  // An empty list is also what a failed or disabled A2S_PLAYER leaves (the INFO answer still counts): no evidence.
  if (
    rules.infoExcess > 0 &&
    list.length > 0 &&
    status.players - list.length >= rules.infoExcess &&
    status.players >= 2 * list.length
  ) {
    reasons.push("INFO_ABOVE_PLAYER_LIST");
  }
  if (rules.sameNamePlayers > 0) {
    const counts = new Map<string, number>();
    for (const p of list) if (p.name !== "") counts.set(p.name, (counts.get(p.name) ?? 0) + 1);
    const largest = Math.max(0, ...counts.values());
    // Bots may share a name (some games name them all alike); the ones the server admits to are allowed.
    if (largest > 1 && largest - bots >= rules.sameNamePlayers) reasons.push("SAME_NAME_PLAYERS");
  }
  if (rules.zeroDurationPlayers > 0) {
    const zero = list.filter((p) => p.durationSeconds === 0).length;
    if (zero >= rules.zeroDurationPlayers && zero * 2 >= list.length)
      reasons.push("ZERO_DURATION_PLAYERS");
  }
  return reasons;
}
