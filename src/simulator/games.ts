/** Games a simulated fleet is made of: real folders, names and Steam app ids, plausible maps. */
export interface SimGame {
  folder: string;
  game: string;
  appId: number;
  /** GoldSrc servers answer INFO with protocol 48 and split in the GoldSrc layout. */
  engine: 'source' | 'goldsrc';
  maps: readonly string[];
  maxPlayers: readonly number[];
  version: string;
  /** Relative weight in a generated fleet. */
  weight: number;
  tags: readonly string[];
}

export const SIM_GAMES: readonly SimGame[] = [
  { folder: 'cstrike', game: 'Counter-Strike', appId: 10, engine: 'goldsrc', maps: ['de_dust2', 'de_inferno', 'cs_office', 'de_nuke', 'de_train', 'cs_italy'], maxPlayers: [16, 20, 32], version: '1.1.2.7/Stdio', weight: 12, tags: [] },
  { folder: 'valve', game: 'Half-Life', appId: 70, engine: 'goldsrc', maps: ['crossfire', 'stalkyard', 'boot_camp', 'snark_pit'], maxPlayers: [16, 24], version: '1.1.2.2/Stdio', weight: 3, tags: [] },
  { folder: 'cstrike', game: 'Counter-Strike: Source', appId: 240, engine: 'source', maps: ['de_dust2', 'cs_office', 'de_inferno', 'de_aztec'], maxPlayers: [24, 32], version: '9540945', weight: 8, tags: ['alltalk', 'increased_maxplayers'] },
  { folder: 'tf', game: 'Team Fortress', appId: 440, engine: 'source', maps: ['ctf_2fort', 'pl_badwater', 'cp_dustbowl', 'koth_harvest_final', 'pl_upward'], maxPlayers: [24, 32, 100], version: '9543365', weight: 15, tags: ['cp', 'valve', 'increased_maxplayers'] },
  { folder: 'csgo', game: 'Counter-Strike 2', appId: 730, engine: 'source', maps: ['de_mirage', 'de_ancient', 'de_anubis', 'de_inferno', 'cs_italy'], maxPlayers: [10, 12, 20, 64], version: '1.40.8.6', weight: 20, tags: ['secure', 'competitive'] },
  { folder: 'garrysmod', game: 'DarkRP', appId: 4000, engine: 'source', maps: ['rp_downtown_v4c_v2', 'gm_construct', 'gm_flatgrass', 'rp_bangclaw'], maxPlayers: [32, 64, 128], version: '2024.10.29', weight: 10, tags: ['gm:darkrp', 'gmc:rp'] },
  { folder: 'dayz', game: 'DayZ', appId: 221100, engine: 'source', maps: ['chernarusplus', 'enoch', 'sakhal'], maxPlayers: [60, 100], version: '1.26.159040', weight: 8, tags: ['battleye', 'shard', 'lqs0', 'etm4.000000', 'entm1.000000'] },
  { folder: 'rust', game: 'Rust', appId: 252490, engine: 'source', maps: ['Procedural Map', 'Barren', 'HapisIsland'], maxPlayers: [50, 100, 200, 300], version: '2585', weight: 10, tags: ['monthly', 'vanilla', 'biweekly', 'oxide'] },
  { folder: 'left4dead2', game: 'Left 4 Dead 2', appId: 550, engine: 'source', maps: ['c1m1_hotel', 'c2m1_highway', 'c8m1_apartment'], maxPlayers: [4, 8], version: '2.2.4.3', weight: 5, tags: ['coop', 'empty'] },
  { folder: 'hl2mp', game: 'Half-Life 2 Deathmatch', appId: 320, engine: 'source', maps: ['dm_lockdown', 'dm_overwatch', 'dm_underpass'], maxPlayers: [16, 24], version: '9540945', weight: 3, tags: [] },
  { folder: 'insurgency', game: 'Insurgency', appId: 222880, engine: 'source', maps: ['ministry', 'market', 'embassy'], maxPlayers: [32, 48], version: '2.4.2.4', weight: 3, tags: ['pvp', 'checkpoint'] },
  { folder: 'ship', game: 'The Ship', appId: 2400, engine: 'source', maps: ['batavier', 'atalanta', 'cruise'], maxPlayers: [16, 32], version: '1.0.0.4', weight: 1, tags: [] },
];

/** Words player names are made of. */
export const NAME_PARTS = {
  first: ['Dark', 'Silent', 'Crazy', 'Lucky', 'Mad', 'Red', 'Iron', 'Ghost', 'Toxic', 'Pixel', 'Captain', 'Sneaky', 'Frozen', 'Turbo', 'Lazy', 'Ninja'],
  second: ['Wolf', 'Sniper', 'Panda', 'Hunter', 'Medic', 'Llama', 'Viking', 'Fox', 'Rider', 'Potato', 'Dragon', 'Cat', 'Reaper', 'Badger', 'Noob', 'King'],
} as const;

export const SERVER_NAME_PARTS = {
  prefix: ['[EU]', '[US]', '[RU]', '[AU]', '[BR]', '[DE]', '[ASIA]', '|PL|', '[FR]', '[UK]'],
  community: ['Skill Zone', 'Bunker', 'Frag House', 'Old School', 'Chill Town', 'Pro Arena', 'No Rules', 'Casual Fun', 'Hardcore', 'Veterans', 'Night Owls', 'Rookies'],
  suffix: ['#1', '#2', '| 24/7', '| FastDL', '| Vanilla', '| Modded', '| 128 tick', '| Newbies welcome', '', ''],
} as const;
