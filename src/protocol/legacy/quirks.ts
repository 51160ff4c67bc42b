/**
 * The shape of a per-game correction of the older protocols. Decoders never look at quirks: they
 * return what the wire says; each protocol's normalisation (src/protocol/protocols/<protocol>.ts)
 * judges which game a reply came from by its raw key/values and applies that game's entry from its
 * own quirk list. Entries name the capture that shows the quirk where one exists; docs/protocols-legacy.md describes the quirks in prose.
 */
import type { ProtocolId } from "../status";
import type { ColorFamily } from "./color-codes";
import type { TextEncoding } from "./text";
import { lookupKey } from "./text";

/** The protocols of this folder: every queried protocol but Valve A2S. */
export type LegacyProtocol = Exclude<ProtocolId, "source" | "bomberman">;

/** Which numbers of a Quake player line mean what. */
export type QuakePlayerLine =
  | "score-ping" // Quake 2/3, CoD, ET, JK2/JKA, Warsow (team after the name)
  | "score-ping-team" // SOF2 1.01+ (q3-sof2-2), DarkPlaces
  | "ping"; // MOHAA in Quake 3 mode

export interface LegacyGameQuirks {
  /** Short game key, e.g. 'bf1942'; 'default' when nothing matched. */
  game: string;
  /** Colour codes the game's names use. */
  colors: ColorFamily;
  /** How the game really encodes text; decoders stay byte-faithful (latin1) and normalisation recodes. */
  encoding: TextEncoding;
  /** Human game name when the reply does not carry one. */
  gameName?: string;
  quakePlayerLine?: QuakePlayerLine;
  /** Where the team number after a Warsow name goes. */
  quakeTeamAfterName?: boolean;
  /** `team_N` value minus this = index into the team rows (BF1942 and BF-era: 1, Halo: 0). */
  teamIndexBase?: number;
  /** Keep only the first `numplayers` player records (BF1942 ghosts, gs1-bf1942-1). */
  trimToNumPlayers?: boolean;
  /** De-duplicate player records by this field (BF1942 keyhash_N). */
  dedupeBy?: string;
  /** Ignore team_N (Operation Flashpoint ghost data, LGSL). */
  ignoreTeam?: boolean;
  /** Strip from player names (AvP2 prefixes names with `<number>~`). */
  namePrefix?: RegExp;
  /** Server key holding the map when `mapname` does not (UT3: p1073741825, Arma: mission). */
  mapKey?: string;
  /** Player names carry a clan-tag separator space to trim for display (BF2). */
  trimPlayerNames?: boolean;
  /** Team value meaning "spectator" (UT99: 255). */
  spectatorTeam?: string;
}

export const DEFAULT_QUIRKS: LegacyGameQuirks = {
  game: "default",
  colors: "idtech",
  encoding: "latin1",
};

/** One game's corrections and how to recognise its replies. */
export interface QuirkEntry {
  quirks: LegacyGameQuirks;
  /** True when a reply's raw key/values come from this game. */
  matches(raw: Readonly<Record<string, string>>): boolean;
}

/** A raw key's value, '' when absent (for quirk matchers). */
export const rawKey = (raw: Readonly<Record<string, string>>, ...names: string[]): string =>
  lookupKey(raw, ...names) ?? "";

/** The first entry of a protocol's list that matches the reply; DEFAULT_QUIRKS when none does. */
export function quirksFrom(
  entries: readonly QuirkEntry[],
  raw: Readonly<Record<string, string>>,
): LegacyGameQuirks {
  return entries.find((e) => e.matches(raw))?.quirks ?? DEFAULT_QUIRKS;
}
