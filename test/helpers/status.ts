import type { ServerStatus } from "../../src/protocol";

/** A complete ServerStatus for store tests; override what the test is about. */
export function makeStatus(overrides: Partial<ServerStatus> = {}): ServerStatus {
  return {
    protocol: "source",
    name: "Test server",
    map: "de_dust2",
    folder: "cstrike",
    game: "Counter-Strike",
    appId: 10,
    gameId: "10",
    players: 5,
    maxPlayers: 16,
    bots: 1,
    passwordProtected: false,
    vacSecured: true,
    dedicated: true,
    os: "linux",
    version: "1.0.0.0",
    keywords: ["alltalk", "fast"],
    gamePort: null,
    steamId: null,
    playerList: [{ name: "alice", score: 3, durationSeconds: 60 }],
    rules: [{ name: "mp_timelimit", value: "30" }],
    raw: null,
    pingMs: 12,
    ...overrides,
  };
}
