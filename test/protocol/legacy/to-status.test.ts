import { decodeLegacyStatus, type LegacyProtocol, type ServerStatus } from "../../../src/protocol";
import { describeWithShared } from "../../helpers/shared-dir";
import { loadLegacyCaptures, packetsOf } from "./capture-files";
import type { LegacyCapture } from "./capture-files";

const PROTOCOL: Record<string, LegacyProtocol> = {
  quake3: "quake3",
  quake2: "quake2",
  gamespy1: "gamespy1",
  gamespy2: "gamespy2",
  gamespy3: "gamespy3",
  "gamespy3-jc2mp": "gamespy3",
  doom3: "doom3",
  "doom3-quake4": "doom3",
  "doom3-etqw": "doom3",
  "doom3-etqw-infoex": "doom3",
  ase: "ase",
  "halflife-won": "halflife",
  "goldsrc-a2s": "halflife",
};

describeWithShared("legacy captures normalise to one ServerStatus", (sharedDir) => {
  const captures = loadLegacyCaptures(sharedDir);
  const statusOf = (c: LegacyCapture): ServerStatus =>
    decodeLegacyStatus(PROTOCOL[c.protocol]!, packetsOf(c));
  const byId = (id: string): LegacyCapture => captures.find((c) => c.id === id)!;

  describe.each(
    captures.filter((c) => c.expected.summary !== undefined).map((c) => [c.file, c] as const),
  )("%s", (_file, capture) => {
    it("agrees with the summary", () => {
      const status = statusOf(capture);
      const summary = capture.expected.summary!;
      expect(status.protocol).toBe(PROTOCOL[capture.protocol]);
      if (typeof summary.name === "string" && summary.name.trim() !== "")
        expect(status.name).not.toBe("");
      if (typeof summary.numplayers === "number") expect(status.players).toBe(summary.numplayers);
      if (typeof summary.maxplayers === "number")
        expect(status.maxPlayers).toBe(summary.maxplayers);
      if (summary.password === "0" || summary.password === "False")
        expect(status.passwordProtected).toBe(false);
      if (summary.password === "1") expect(status.passwordProtected).toBe(true);
      if (typeof summary.player_records === "number" && !capture.id.startsWith("gs1-bf1942")) {
        expect(status.playerList).toHaveLength(summary.player_records);
      }
      expect(status.raw).not.toBeNull();
      for (const p of status.playerList) expect(p.raw).toBeDefined();
    });
  });

  it("keeps colour codes in raw and strips them in the clean name (Quake 3)", () => {
    const status = statusOf(byId("q3-quake3-1"));
    expect(status.name).not.toMatch(/\^[0-9]/);
    const rawName = status.raw!.sv_hostname ?? "";
    expect(rawName.length).toBeGreaterThanOrEqual(status.name.length);
  });

  it("strips CoD 1 double-caret colours (q3-cod-1)", () => {
    const status = statusOf(byId("q3-cod-1"));
    expect(status.playerList[0]!.name).toBe("East|wood.");
    expect(status.playerList[0]!.raw!.name).toBe("^^00East^^22|^^00wood^^11.     ");
    expect(status.name).toBe("neXus#TDM");
  });

  it("keeps the first numplayers BF1942 records and maps 1-based teams to team names (gs1-bf1942-1)", () => {
    const status = statusOf(byId("gs1-bf1942-1"));
    expect(status.playerList).toHaveLength(17);
    expect(status.playerList[0]).toMatchObject({
      name: "FEDIYMAX",
      score: 7,
      pingMs: 187,
      team: "allied",
      deaths: 8,
    });
  });

  it("reads the BF2 team name and bot flag (gs3-bf2-2)", () => {
    const status = statusOf(byId("gs3-bf2-2"));
    expect(status.playerList[0]).toMatchObject({
      name: "=]H[= Eskil_swe",
      team: "US",
      score: 99,
      pingMs: 106,
    });
    expect(status.bots).toBe(0);
  });

  it("finds the UT3 map in p1073741825 (gs3-ut3-1)", () => {
    expect(statusOf(byId("gs3-ut3-1")).map).toBe("DM-Campgrounds-U3-Fix");
  });

  it("recodes Minecraft UTF-8 and strips § colours (gs3-minecraft-1)", () => {
    const status = statusOf(byId("gs3-minecraft-1"));
    expect(status.name).toBe("<<<TRIBES>>>");
    expect(status.raw!.hostname).toBe("§3<<<§2TRIBES§3>>>");
    expect(status.map).toBe("world");
  });

  it("decodes the JC2MP variant (gs3-justcause2-2)", () => {
    const status = statusOf(byId("gs3-justcause2-2"));
    expect(status.playerList[0]).toMatchObject({ name: "Moonman", pingMs: 39 });
    expect(status.passwordProtected).toBe(false);
  });

  it("strips maps/ and .entities from the ETQW map and counts bots (d3-etqw-2)", () => {
    const status = statusOf(byId("d3-etqw-2"));
    expect(status.map).toBe("ark");
    expect(status.bots).toBe(status.playerList.filter((p) => p.raw!.bot === "1").length);
    expect(status.bots).toBeGreaterThan(0);
  });

  it("strips Quake 4 colours (d3-quake4-1)", () => {
    const status = statusOf(byId("d3-quake4-1"));
    expect(status.playerList[2]!.name).toBe("Joker :)");
    expect(status.game).toBe("Quake 4");
  });

  it("merges m/D/E Half-Life replies (hl-cs15-1)", () => {
    const status = statusOf(byId("hl-cs15-1"));
    expect(status).toMatchObject({
      map: "de_inferno",
      folder: "cstrike",
      players: 7,
      maxPlayers: 30,
      dedicated: true,
      os: "linux",
      passwordProtected: false,
    });
    expect(status.playerList[1]).toMatchObject({ name: "Addicted", score: 16 });
    expect(status.rules.length).toBe(94);
  });

  it("recodes MTA UTF-8 (ase-mta-1)", () => {
    const status = statusOf(byId("ase-mta-1"));
    expect(status.name).toContain("Español");
    expect(status.gamePort).toBe(22003);
    expect(status.playerList[0]).toMatchObject({ name: "Laucha", pingMs: 154 });
  });
});
