import type { SimServerSpec } from "./fleet-spec";

const FOLDERS = ["cstrike", "tf", "hl2mp", "csgo"] as const;
const APP_IDS: Record<(typeof FOLDERS)[number], number> = {
  cstrike: 10,
  tf: 440,
  hl2mp: 320,
  csgo: 730,
};
const MAPS = [
  "de_dust2",
  "de_inferno",
  "cs_office",
  "ctf_2fort",
  "pl_badwater",
  "dm_lockdown",
  "de_nuke",
  "cp_dustbowl",
  "de_mirage",
  "dm_overwatch",
];
const REGIONS = [0, 1, 2, 3, 4, 5, 6, 7, 0xff];

/**
 * A deterministic fleet for the list-source simulators (Valve master, Steam Web API) when no A2S fleet is
 * given: they only list it; nothing answers queries at these addresses.
 * Every server has its own loopback IP (127.1.0.0/16 onwards), so addresses are unique; states vary
 * along every filter the simulated master applies.
 */
export function makeListFleet(count: number): SimServerSpec[] {
  return Array.from({ length: count }, (_, i) => {
    const folder = FOLDERS[i % FOLDERS.length] ?? "cstrike";
    const maxPlayers = 8 + (i % 5) * 8;
    return {
      host: `127.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
      queryPort: 27015 + (i % 3),
      region: REGIONS[i % REGIONS.length] ?? 0,
      state: {
        name: `${String.fromCharCode(97 + ((i * 7) % 26))}${String.fromCharCode(97 + ((i * 11) % 26))} server ${i}`,
        map: MAPS[(i * 7) % MAPS.length] ?? "de_dust2",
        folder,
        game: folder,
        appId: APP_IDS[folder],
        players: (i * 13) % (maxPlayers + 1),
        maxPlayers,
        bots: i % 2,
        serverType: i % 10 === 0 ? "l" : i % 10 === 1 ? "p" : "d",
        environment: i % 3 === 0 ? "w" : "l",
        passwordProtected: i % 7 === 0,
        vacSecured: i % 5 !== 0,
        version: `1.${i % 4}.0`,
        keywords: i % 2 === 0 ? ["alltalk", "increased_maxplayers"] : ["hardcore"],
        gamePort: 27015 + (i % 3),
      },
    };
  });
}
