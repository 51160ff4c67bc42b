/**
 * Games and where their servers listen, the way GameDig's games table keeps them: a game's protocol,
 * its usual game port and where its query port is (an offset from the game port, or a fixed port).
 * The first game listed for a protocol gives that protocol's defaults (registry.ts): the game port
 * `gsindex query` assumes when HOST has none, and the offset it applies to `--game-port`.
 * Ports are the servers' shipped defaults; a server may be configured otherwise.
 */
import type { ProtocolId } from "./status";

export interface GameEntry {
  /** Short key, e.g. 'ut'. */
  id: string;
  name: string;
  /** Steam app id, where the game is on Steam. */
  appId?: number;
  protocol: Exclude<ProtocolId, "bomberman">;
  gamePort: number;
  /** The query port is the game port plus this. @defaultValue 0 */
  queryPortOffset?: number;
  /** The query port is this fixed port, whatever the game port (BF2's 29900). */
  queryPort?: number;
}

export const GAMES: readonly GameEntry[] = [
  { id: "cs2", name: "Counter-Strike 2", appId: 730, protocol: "source", gamePort: 27015 },
  { id: "cs16", name: "Counter-Strike 1.6", appId: 10, protocol: "source", gamePort: 27015 },
  { id: "css", name: "Counter-Strike: Source", appId: 240, protocol: "source", gamePort: 27015 },
  { id: "tf2", name: "Team Fortress 2", appId: 440, protocol: "source", gamePort: 27015 },
  { id: "garrysmod", name: "Garry's Mod", appId: 4000, protocol: "source", gamePort: 27015 },
  { id: "left4dead2", name: "Left 4 Dead 2", appId: 550, protocol: "source", gamePort: 27015 },
  { id: "hl2dm", name: "Half-Life 2: Deathmatch", appId: 320, protocol: "source", gamePort: 27015 },
  { id: "quake2", name: "Quake II", appId: 2320, protocol: "quake2", gamePort: 27910 },
  { id: "quake3", name: "Quake III Arena", appId: 2200, protocol: "quake3", gamePort: 27960 },
  { id: "cod", name: "Call of Duty", appId: 2620, protocol: "quake3", gamePort: 28960 },
  { id: "etmain", name: "Wolfenstein: Enemy Territory", protocol: "quake3", gamePort: 27960 },
  { id: "xonotic", name: "Xonotic", protocol: "quake3", gamePort: 26000 },
  {
    id: "ut",
    name: "Unreal Tournament",
    appId: 13240,
    protocol: "gamespy1",
    gamePort: 7777,
    queryPortOffset: 1,
  },
  {
    id: "bf1942",
    name: "Battlefield 1942",
    protocol: "gamespy1",
    gamePort: 14567,
    queryPort: 23000,
  },
  {
    id: "mohaa",
    name: "Medal of Honor: Allied Assault",
    protocol: "gamespy1",
    gamePort: 12203,
    queryPortOffset: 97,
  },
  { id: "halo", name: "Halo: Combat Evolved", protocol: "gamespy2", gamePort: 2302 },
  { id: "arma", name: "ARMA: Armed Assault", protocol: "gamespy2", gamePort: 2302 },
  { id: "swat4", name: "SWAT 4", protocol: "gamespy2", gamePort: 10480, queryPortOffset: 2 },
  {
    id: "americasarmy",
    name: "America's Army",
    protocol: "gamespy2",
    gamePort: 1716,
    queryPortOffset: 1,
  },
  { id: "crysis", name: "Crysis", appId: 17300, protocol: "gamespy3", gamePort: 64087 },
  { id: "minecraft", name: "Minecraft", protocol: "gamespy3", gamePort: 25565 },
  { id: "bf2", name: "Battlefield 2", protocol: "gamespy3", gamePort: 16567, queryPort: 29900 },
  {
    id: "jc2mp",
    name: "Just Cause 2: Multiplayer",
    appId: 259080,
    protocol: "gamespy3",
    gamePort: 7777,
  },
  { id: "doom3", name: "Doom 3", appId: 9050, protocol: "doom3", gamePort: 27666 },
  { id: "quake4", name: "Quake 4", appId: 2210, protocol: "doom3", gamePort: 28004 },
  { id: "halflife-won", name: "Half-Life (WON)", protocol: "halflife", gamePort: 27015 },
  { id: "mta", name: "Multi Theft Auto", protocol: "ase", gamePort: 22003, queryPortOffset: 123 },
];

/** Where a game's server answers queries when it listens on `gamePort`. */
export function queryPortOf(game: GameEntry, gamePort: number = game.gamePort): number {
  return game.queryPort ?? gamePort + (game.queryPortOffset ?? 0);
}

/** A game by its key. */
export function gameById(id: string): GameEntry | undefined {
  return GAMES.find((g) => g.id === id);
}
