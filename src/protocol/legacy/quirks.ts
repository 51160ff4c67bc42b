/**
 * Every per-game correction of the legacy protocols, in one table. Decoders never look here:
 * they return what the wire says; normalisation (to-status.ts) asks `legacyQuirksFor` which game a
 * reply came from and applies the entry. Each entry names the spec section and, where one exists,
 * the capture in ../shared/captures/legacy that shows it.
 */
import type { ColorFamily } from './color-codes';
import type { TextEncoding } from './text';
import { lookupKey } from './text';

/** Which numbers of a Quake player line mean what (§4.2). */
export type QuakePlayerLine =
  | 'score-ping' // Quake 2/3, CoD, ET, JK2/JKA, Warsow (team after the name)
  | 'score-ping-team' // SOF2 1.01+ (q3-sof2-2), DarkPlaces
  | 'ping'; // MOHAA in Quake 3 mode

export interface LegacyGameQuirks {
  /** Short game key, e.g. 'bf1942'; 'default' when nothing matched. */
  game: string;
  /** Colour codes the game's names use (§0.4). */
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

const DEFAULT: LegacyGameQuirks = { game: 'default', colors: 'idtech', encoding: 'latin1' };

interface QuirkEntry {
  quirks: LegacyGameQuirks;
  /** True when a reply's raw key/values come from this game. */
  matches(protocol: LegacyProtocol, raw: Readonly<Record<string, string>>): boolean;
}

export type LegacyProtocol = 'quake2' | 'quake3' | 'gamespy1' | 'gamespy2' | 'gamespy3' | 'doom3' | 'halflife' | 'ase';

const key = (raw: Readonly<Record<string, string>>, ...names: string[]): string => lookupKey(raw, ...names) ?? '';

const TABLE: readonly QuirkEntry[] = [
  // §4.2 / §0.4: CoD 1 and UO also use ^^ + a doubled digit (q3-cod-1, q3-coduo-*).
  {
    quirks: { game: 'cod', colors: 'cod1', encoding: 'latin1', gameName: 'Call of Duty' },
    matches: (p, raw) => p === 'quake3' && (key(raw, 'gamename') === 'main' || key(raw, 'gamename').startsWith('CoD:United Offensive')),
  },
  // §4.2: SOF2 1.01+ sends score ping team "name" (q3-sof2-2).
  {
    quirks: { game: 'sof2', colors: 'idtech', encoding: 'latin1', quakePlayerLine: 'score-ping-team' },
    matches: (p, raw) => p === 'quake3' && key(raw, 'gamename').toLowerCase() === 'sof2mp',
  },
  // §4.2: Warsow / qfusion put the team after the name (q3-warsow-*).
  {
    quirks: { game: 'warsow', colors: 'idtech', encoding: 'latin1', quakeTeamAfterName: true },
    matches: (p, raw) => p === 'quake3' && /^(warsow|warfork)$/i.test(key(raw, 'gamename')),
  },
  // §0.4 / §4.2: DarkPlaces colours and score ping team "name".
  {
    quirks: { game: 'darkplaces', colors: 'darkplaces', encoding: 'utf8', quakePlayerLine: 'score-ping-team' },
    matches: (p, raw) => p === 'quake3' && /^(xonotic|nexuiz)$/i.test(key(raw, 'gamename')),
  },
  // §4.2: MOHAA in Quake 3 mode sends `<ping> "<name>"` only.
  {
    quirks: { game: 'mohaa-q3', colors: 'idtech', encoding: 'latin1', quakePlayerLine: 'ping' },
    matches: (p, raw) => p === 'quake3' && /^mohaa|^mohpa/i.test(key(raw, 'gamename')),
  },
  // §1.5: BF1942 playername_N, 1-based team_N into 0-based teamname_N, ghost records (gs1-bf1942-1).
  {
    quirks: { game: 'bf1942', colors: 'none', encoding: 'latin1', gameName: 'Battlefield 1942', teamIndexBase: 1, trimToNumPlayers: true, dedupeBy: 'keyhash' },
    matches: (p, raw) => p === 'gamespy1' && key(raw, 'gamename') === 'bfield1942',
  },
  // §1.5: UT99 ping with a leading space, team 255 = spectator (gs1-ut99-*).
  {
    quirks: { game: 'ut99', colors: 'none', encoding: 'latin1', gameName: 'Unreal Tournament', spectatorTeam: '255' },
    matches: (p, raw) => p === 'gamespy1' && key(raw, 'gamename') === 'ut',
  },
  // §1.5: Operation Flashpoint ghost team_N (LGSL).
  {
    quirks: { game: 'ofp', colors: 'none', encoding: 'latin1', ignoreTeam: true },
    matches: (p, raw) => p === 'gamespy1' && /^(opflash|opflashr)$/i.test(key(raw, 'gamename')),
  },
  // §1.5: AvP2 names prefixed with `<number>~` (LGSL).
  {
    quirks: { game: 'avp2', colors: 'none', encoding: 'latin1', namePrefix: /^[0-9]+~/ },
    matches: (p, raw) => p === 'gamespy1' && key(raw, 'gamename').toLowerCase() === 'avp2',
  },
  // §1.5: MOHAA sparse player slots (gs1-mohaa-*): nothing to correct beyond the generic rules.
  { quirks: { game: 'mohaa', colors: 'none', encoding: 'latin1', gameName: 'Medal of Honor: Allied Assault' }, matches: (p, raw) => p === 'gamespy1' && /^moh/i.test(key(raw, 'gamename')) },
  // §2.3: Halo control bytes in names (stripped as controls), 0-based team_ (gs2-halo-*).
  { quirks: { game: 'halo', colors: 'none', encoding: 'latin1', gameName: 'Halo', teamIndexBase: 0 }, matches: (p, raw) => p === 'gamespy2' && key(raw, 'gamename') === 'halor' },
  // §2.3: Arma keeps the map in `mission`, empty team_ values (gs2-arma-*).
  { quirks: { game: 'arma', colors: 'none', encoding: 'latin1', gameName: 'ARMA', mapKey: 'mission', ignoreTeam: true }, matches: (p, raw) => p === 'gamespy2' && key(raw, 'gamename') === 'armedass' },
  // §0.4 / §2.3: America's Army uses Unreal 2 colours (0x1B + RGB).
  { quirks: { game: 'americasarmy', colors: 'unreal2', encoding: 'latin1', gameName: "America's Army" }, matches: (p, raw) => (p === 'gamespy2' || p === 'gamespy3') && key(raw, 'gamename') === 'armygame' },
  // §3.4: BF2 names start with a space when the clan tag is empty; team_ is 1-based (gs3-bf2-*).
  {
    quirks: { game: 'bf2', colors: 'none', encoding: 'latin1', gameName: 'Battlefield 2', teamIndexBase: 1, trimPlayerNames: true },
    matches: (p, raw) => p === 'gamespy3' && /^battlefield2/.test(key(raw, 'gamename')),
  },
  // §3.4: UT3's map is in p1073741825 (gs3-ut3-1).
  { quirks: { game: 'ut3', colors: 'none', encoding: 'latin1', gameName: 'Unreal Tournament 3', mapKey: 'p1073741825' }, matches: (p, raw) => p === 'gamespy3' && key(raw, 'p1073741825') !== '' },
  // §3.4: Minecraft Query: UTF-8, § colours, `map` key (gs3-minecraft-*).
  { quirks: { game: 'minecraft', colors: 'minecraft', encoding: 'utf8', gameName: 'Minecraft', mapKey: 'map' }, matches: (p, raw) => p === 'gamespy3' && key(raw, 'game_id') === 'MINECRAFT' },
  // §3.5: JC2MP sends UTF-8 (gs3-justcause2-*).
  { quirks: { game: 'jc2mp', colors: 'none', encoding: 'utf8', gameName: 'Just Cause 2: Multiplayer' }, matches: (p, raw) => p === 'gamespy3' && key(raw, '__jc2mp') === '1' },
  // §0.4 / §5.4: Quake 4 colours ^c### and ^i… (d3-quake4-1).
  { quirks: { game: 'quake4', colors: 'quake4', encoding: 'latin1', gameName: 'Quake 4' }, matches: (p, raw) => p === 'doom3' && key(raw, 'si_version').startsWith('Quake4') },
  // §5.4: ETQW (d3-etqw-*).
  { quirks: { game: 'etqw', colors: 'idtech', encoding: 'latin1', gameName: 'Enemy Territory: Quake Wars' }, matches: (p, raw) => p === 'doom3' && key(raw, 'si_version').startsWith('ETQW') },
  { quirks: { game: 'doom3', colors: 'idtech', encoding: 'latin1', gameName: 'Doom 3' }, matches: (p, raw) => p === 'doom3' && key(raw, 'si_version').startsWith('DOOM') },
  { quirks: { game: 'prey', colors: 'idtech', encoding: 'latin1', gameName: 'Prey' }, matches: (p, raw) => p === 'doom3' && /^prey/i.test(key(raw, 'si_version')) },
  // §8.3: MTA sends UTF-8 with colours already removed (ase-mta-1).
  { quirks: { game: 'mta', colors: 'none', encoding: 'utf8', gameName: 'Multi Theft Auto' }, matches: (p, raw) => p === 'ase' && key(raw, 'gamename') === 'mta' },
  // Defaults per protocol family.
  { quirks: { ...DEFAULT, game: 'quake2' }, matches: (p) => p === 'quake2' },
  { quirks: { ...DEFAULT, game: 'gamespy', colors: 'none' }, matches: (p) => p === 'gamespy1' || p === 'gamespy2' || p === 'gamespy3' },
  { quirks: { ...DEFAULT, game: 'goldsrc', colors: 'none' }, matches: (p) => p === 'halflife' },
  { quirks: { ...DEFAULT, game: 'ase', colors: 'none' }, matches: (p) => p === 'ase' },
];

/** The quirks of the game a reply came from, judged by its raw key/values; defaults when unknown. */
export function legacyQuirksFor(protocol: LegacyProtocol, raw: Readonly<Record<string, string>>): LegacyGameQuirks {
  return TABLE.find((e) => e.matches(protocol, raw))?.quirks ?? DEFAULT;
}

/**
 * Query ports per protocol (§9): a function of the game port. Only offsets that hold for the
 * protocol's usual games are applied; `--query-port` overrides for the rest.
 */
export const QUERY_PORT_OFFSET: Readonly<Record<LegacyProtocol, number>> = {
  quake2: 0,
  quake3: 0,
  gamespy1: 1, // UE1 games (UT, Unreal, Rune, Deus Ex, …): game + 1
  gamespy2: 0, // Halo, Arma: = game (SWAT 4 +2, AA +1: pass --query-port)
  gamespy3: 0, // Crysis, Minecraft, JC2MP: = game (BF2 29900: pass --query-port)
  doom3: 0,
  halflife: 0,
  ase: 123, // §8: game port + 123 for almost all
};
