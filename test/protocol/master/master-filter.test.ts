import {
  MAX_MASTER_FILTER_BYTES,
  MasterFilter as F,
  buildMasterFilter,
  parseMasterFilter,
} from "../../../src/protocol";

describe("master filter builder", () => {
  it("writes every filter Valve's Master Server Query Protocol page lists", () => {
    const filter = buildMasterFilter(
      [
        F.type("d"),
        F.dedicated(),
        F.secure(),
        F.gamedir("cstrike"),
        F.map("de_dust2"),
        F.linux(),
        F.notEmpty(),
        F.notFull(),
        F.proxy(),
        F.appId(730),
        F.notAppId(440),
        F.noPlayers(),
        F.whitelisted(),
        F.password(false),
        F.gametype(["a", "b"]),
        F.gamedata(["x"]),
        F.gamedataor(["y", "z"]),
        F.nameMatch("*dust*"),
        F.versionMatch("1.*"),
        F.collapseAddrHash(),
        F.gameaddr("1.2.3.4", 27015),
      ],
      { maxBytes: 1000 },
    );
    expect(filter).toBe(
      "\\type\\d\\dedicated\\1\\secure\\1\\gamedir\\cstrike\\map\\de_dust2\\linux\\1\\empty\\1\\full\\1\\proxy\\1\\appid\\730" +
        "\\napp\\440\\noplayers\\1\\white\\1\\password\\0\\gametype\\a,b\\gamedata\\x\\gamedataor\\y,z\\name_match\\*dust*" +
        "\\version_match\\1.*\\collapse_addr_hash\\1\\gameaddr\\1.2.3.4:27015",
    );
  });

  it("counts the direct conditions of each combinator, a nested group being one condition", () => {
    const filter = buildMasterFilter([
      F.appId(730),
      F.nor(F.nand(F.map("a"), F.map("b"), F.linux()), F.secure()),
      F.or(F.gamedir("x"), F.and(F.notEmpty(), F.notFull())),
    ]);
    expect(filter).toBe(
      "\\appid\\730\\nor\\2\\nand\\3\\map\\a\\map\\b\\linux\\1\\secure\\1\\or\\2\\gamedir\\x\\and\\2\\empty\\1\\full\\1",
    );
    expect(parseMasterFilter(filter)).toEqual([
      F.appId(730),
      F.nor(F.nand(F.map("a"), F.map("b"), F.linux()), F.secure()),
      F.or(F.gamedir("x"), F.and(F.notEmpty(), F.notFull())),
    ]);
  });

  it("escapes a backslash in wildcard fields and refuses it where it cannot be expressed", () => {
    expect(buildMasterFilter([F.nameMatch("a\\b*")])).toBe("\\name_match\\a*b*");
    expect(() => F.map("de\\dust")).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(() => F.gamedir("a\0b")).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(() => F.gametype(["a,b"])).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
    expect(() => F.nor()).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(() => F.appId(-1)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });

  it("refuses a filter longer than the master accepts with FILTER_TOO_LONG", () => {
    const maps = Array.from({ length: 30 }, (_, i) => F.map(`map_number_${i}`));
    expect(() => buildMasterFilter([F.nor(...maps)])).toThrow(
      expect.objectContaining({ code: "FILTER_TOO_LONG" }),
    );
    const fits = buildMasterFilter([
      F.nameMatch("x".repeat(MAX_MASTER_FILTER_BYTES - "\\name_match\\".length)),
    ]);
    expect(fits.length).toBe(MAX_MASTER_FILTER_BYTES);
    expect(() => buildMasterFilter([F.nameMatch("é".repeat(90))])).toThrow(
      expect.objectContaining({ code: "FILTER_TOO_LONG" }),
    );
  });

  it("parses text filters, lower-casing keys, and rejects malformed ones with an offset", () => {
    expect(parseMasterFilter("")).toEqual([]);
    expect(parseMasterFilter("\\GameDir\\cstrike\\")).toEqual([F.gamedir("cstrike")]);
    expect(() => parseMasterFilter("gamedir\\x")).toThrow(
      expect.objectContaining({ code: "MALFORMED", offset: 0 }),
    );
    expect(() => parseMasterFilter("\\nor\\2\\map\\a")).toThrow(
      expect.objectContaining({ code: "MALFORMED" }),
    );
    expect(() => parseMasterFilter("\\nor\\x\\map\\a")).toThrow(
      expect.objectContaining({ code: "MALFORMED" }),
    );
    expect(() => parseMasterFilter("\\map")).toThrow(
      expect.objectContaining({ code: "MALFORMED" }),
    );
  });
});
