import { defaultMasterSources } from "../../src/cli/commands/serve";
import { loadConfig } from "../../src/shared/config";

describe("gsindex serve without MASTER_SOURCES", () => {
  it("crawls Valve's master server", () => {
    const config = loadConfig({ MASTER_SOURCES: defaultMasterSources({}) });
    expect(config.masterSources).toEqual([
      expect.objectContaining({
        name: "valve-master",
        kind: "VALVE_UDP",
        host: "hl2master.steampowered.com",
        port: 27011,
      }),
    ]);
  });

  it("adds the Steam Web API when a key is set, without putting the key in the source", () => {
    const json = defaultMasterSources({ STEAM_WEB_API_KEY: "secret-key" });
    expect(json).not.toContain("secret-key");
    const config = loadConfig({ MASTER_SOURCES: json, STEAM_WEB_API_KEY: "secret-key" });
    expect(config.masterSources.map((s) => s.kind)).toEqual(["VALVE_UDP", "STEAM_WEB_API"]);
  });
});
