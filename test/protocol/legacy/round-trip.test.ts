/**
 * Encoders and decoders agree: a constructed reply encodes to bytes that decode back to it, and
 * real captures re-encode byte for byte where the protocol has one canonical form.
 */
import {
  decodeAseResponse,
  encodeAseRequest,
  encodeAseResponse,
} from "../../../src/protocol/legacy/ase";
import type { AseResponse } from "../../../src/protocol/legacy/ase";
import {
  decodeDoom3Response,
  encodeDoom3InfoRequest,
  encodeDoom3Response,
} from "../../../src/protocol/legacy/doom3";
import {
  decodeGamespy1Response,
  encodeGamespy1Request,
  encodeGamespy1Response,
  groupGamespy1Pairs,
} from "../../../src/protocol/legacy/gamespy1";
import {
  ALL_SECTIONS,
  decodeGamespy2Response,
  encodeGamespy2Request,
  encodeGamespy2Response,
} from "../../../src/protocol/legacy/gamespy2";
import {
  decodeGamespy3ChallengeResponse,
  decodeGamespy3Response,
  decodeJc2mpResponse,
  encodeGamespy3ChallengeRequest,
  encodeGamespy3ChallengeResponse,
  encodeGamespy3QueryRequest,
  encodeGamespy3Response,
  encodeJc2mpResponse,
} from "../../../src/protocol/legacy/gamespy3";
import {
  decodeHalfLifeDatagrams,
  decodeHalfLifeMessage,
  encodeGoldSrcSplit,
  encodeHalfLifeMessage,
  encodeHalfLifeRequest,
} from "../../../src/protocol/legacy/halflife";
import {
  decodeQuakeResponse,
  encodeQuake2StatusRequest,
  encodeQuake3InfoRequest,
  encodeQuake3StatusRequest,
  encodeQuakeResponse,
} from "../../../src/protocol/legacy/quake3";
import type { QuakeResponse } from "../../../src/protocol/legacy/quake3";
import { describeWithShared } from "../../helpers/shared-dir";
import { loadLegacyCaptures, packetsOf } from "./capture-files";

const hex = (b: Buffer): string => b.toString("hex");

describe("request encoders", () => {
  it("produce the bytes of the spec", () => {
    expect(hex(encodeQuake3StatusRequest())).toBe("ffffffff6765747374617475730a");
    expect(encodeQuake3InfoRequest({ challenge: "abc" }).toString("latin1")).toBe(
      "\xff\xff\xff\xffgetinfo abc\n",
    );
    expect(hex(encodeQuake3StatusRequest({ prefixByte: 2 }))).toBe(
      "ffffffff02676574737461747573" + "0a",
    );
    expect(hex(encodeQuake2StatusRequest())).toBe("ffffffff73746174757300");
    expect(hex(encodeGamespy1Request())).toBe("5c7374617475735c");
    expect(encodeGamespy1Request(["info", "rules"]).toString()).toBe("\\info\\\\rules\\");
    expect(
      hex(
        encodeGamespy2Request(Buffer.from("CORY"), { server: true, players: true, teams: false }),
      ),
    ).toBe("fefd00434f5259ffff00");
    expect(hex(encodeGamespy3ChallengeRequest(Buffer.from([0x10, 0x20, 0x30, 0x40])))).toBe(
      "fefd0910203040",
    );
    expect(hex(encodeGamespy3QueryRequest(Buffer.from([0x10, 0x20, 0x30, 0x40]), null))).toBe(
      "fefd0010203040ffffff01",
    );
    // qstat's example: challenge -1287574694 -> B3 41 2B 5A
    expect(hex(encodeGamespy3QueryRequest(Buffer.from([0, 0, 0, 1]), -1287574694))).toBe(
      "fefd0000000001b3412b5affffff01",
    );
    expect(hex(encodeDoom3InfoRequest(1))).toBe("ffff676574496e666f0001000000");
    expect(hex(encodeHalfLifeRequest("details"))).toBe("ffffffff64657461696c7300");
    expect(hex(encodeAseRequest())).toBe("73");
  });

  it("refuse arguments the wire cannot carry", () => {
    expect(() => encodeQuake3StatusRequest({ challenge: "a b" })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
    expect(() => encodeDoom3InfoRequest(-1)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
    expect(() => encodeGamespy2Request(Buffer.from("abc"))).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
  });
});

describe("response encoders round-trip through the decoders", () => {
  it("Quake 3 statusResponse with every player-line variant", () => {
    const response: QuakeResponse = {
      header: "statusResponse",
      prefixByte: null,
      info: [
        { key: "sv_hostname", value: "^1Box" },
        { key: "challenge", value: "" },
        { key: "mapname", value: "q3dm17" },
      ],
      players: [
        { numbers: [12, 50], name: "^1Player", afterName: "" },
        { numbers: [-9999, 0, 3], name: 'with "quotes" inside', afterName: "" },
        { numbers: [5], name: "mohaa", afterName: "" },
        { numbers: [1, 34], name: "warsow", afterName: "2" },
      ],
    };
    expect(decodeQuakeResponse(encodeQuakeResponse(response))).toEqual(response);
    const info: QuakeResponse = {
      header: "infoResponse",
      prefixByte: 1,
      info: [{ key: "hostname", value: "x" }],
      players: [],
    };
    expect(decodeQuakeResponse(encodeQuakeResponse(info))).toEqual(info);
  });

  it("GameSpy v1 in several datagrams, final before or after queryid, any arrival order", () => {
    const pairs = Array.from({ length: 40 }, (_, i) => [
      { key: `player_${i}`, value: `p${i}` },
      { key: `frags_${i}`, value: String(i) },
    ]).flat();
    const all = [{ key: "hostname", value: "Box" }, { key: "numplayers", value: "40" }, ...pairs];
    for (const finalAfterQueryId of [false, true]) {
      const datagrams = encodeGamespy1Response(all, {
        queryId: 57,
        maxDatagramBytes: 200,
        finalAfterQueryId,
      });
      expect(datagrams.length).toBeGreaterThan(3);
      const decoded = decodeGamespy1Response([...datagrams].reverse());
      expect(decoded.complete).toBe(true);
      expect(decoded.pairs).toEqual(all);
      expect(groupGamespy1Pairs(decoded.pairs).players).toHaveLength(40);
      expect(decodeGamespy1Response(datagrams.slice(1)).complete).toBe(false);
    }
  });

  it("GameSpy v2 with 16-bit player counts", () => {
    const rows = Array.from({ length: 300 }, (_, i) => [`p${i}`, String(i)]);
    const response = {
      requestId: Buffer.from("CORY"),
      server: [
        { key: "hostname", value: "Box" },
        { key: "empty", value: "" },
      ],
      players: { countField: 300, fields: ["player_", "score_"], rows },
      teams: {
        countField: 2,
        fields: ["team_t", "score_t"],
        rows: [
          ["Red", "0"],
          ["Blue", ""],
        ],
      },
      trailingBytes: 0,
    };
    expect(decodeGamespy2Response(encodeGamespy2Response(response), ALL_SECTIONS)).toEqual(
      response,
    );
  });

  it("GameSpy v3 split over datagrams, re-stating field and start row, any arrival order", () => {
    const rows = Array.from({ length: 60 }, (_, i) => ({
      player_: ` player number ${i}`,
      score_: String(i * 3),
      ping_: String(i + 20),
    }));
    const response = {
      requestId: Buffer.from([1, 2, 3, 4]),
      server: [
        { key: "hostname", value: "Box" },
        { key: "numplayers", value: "60" },
      ],
      players: { fields: ["player_", "score_", "ping_"], rows },
      teams: {
        fields: ["team_t", "score_t"],
        rows: [
          { team_t: "Red", score_t: "1" },
          { team_t: "Blue", score_t: "2" },
        ],
      },
    };
    const datagrams = encodeGamespy3Response(response, { maxDatagramBytes: 400 });
    expect(datagrams.length).toBeGreaterThan(2);
    for (const order of [datagrams, [...datagrams].reverse()]) {
      const decoded = decodeGamespy3Response(order);
      expect(decoded.complete).toBe(true);
      expect(decoded.server).toEqual(response.server);
      expect(decoded.players).toEqual(response.players);
      expect(decoded.teams).toEqual(response.teams);
    }
    expect(decodeGamespy3Response(datagrams.slice(0, -1)).complete).toBe(false);
  });

  it("GameSpy v3 challenge and JC2MP", () => {
    const id = Buffer.from([9, 8, 7, 6]);
    expect(decodeGamespy3ChallengeResponse(encodeGamespy3ChallengeResponse(id, -12345))).toEqual({
      requestId: id,
      challenge: -12345,
    });
    expect(decodeGamespy3ChallengeResponse(encodeGamespy3ChallengeResponse(id, null))).toEqual({
      requestId: id,
      challenge: null,
    });
    // UT3 pads the number with extra NULs; unsigned text wraps to the signed 32-bit value
    expect(
      decodeGamespy3ChallengeResponse(
        Buffer.concat([Buffer.from([9, 9, 8, 7, 6]), Buffer.from("3000000000\0\0\0")]),
      ).challenge,
    ).toBe(3000000000 - 2 ** 32);
    const jc = {
      requestId: id,
      server: [{ key: "hostname", value: "x" }],
      playerCountField: 1,
      players: [{ name: "a", steamId: "STEAM_0:0:1", pingMs: 300 }],
    };
    expect(decodeJc2mpResponse(encodeJc2mpResponse(jc))).toEqual(jc);
  });

  it("Doom 3 family layouts", () => {
    const base = {
      header: "infoResponse" as const,
      challenge: Buffer.from([1, 0, 0, 0]),
      etqwExtra: null,
      sizeField: null,
      info: [
        { key: "si_name", value: "^1Box" },
        { key: "si_map", value: "game/mp/d3dm1" },
      ],
      osMask: 7,
      etqw: null,
      playersEx: null,
      trailing: Buffer.alloc(0),
    };
    const doom3 = {
      ...base,
      protocolMajor: 1,
      protocolMinor: 41,
      layout: "doom3" as const,
      players: [
        {
          id: 0,
          pingMs: 61,
          rate: 10000,
          name: "a",
          clanTag: null,
          clanTagPosition: null,
          isBot: null,
        },
        { id: 6, pingMs: 0, rate: 1, name: "b", clanTag: null, clanTagPosition: null, isBot: null },
      ],
    };
    expect(decodeDoom3Response(encodeDoom3Response(doom3))).toEqual(doom3);
    const quake4 = {
      ...base,
      protocolMajor: 2,
      protocolMinor: 85,
      layout: "quake4" as const,
      players: [
        {
          id: 1,
          pingMs: 5,
          rate: 25600,
          name: "a",
          clanTag: "^c014tag",
          clanTagPosition: null,
          isBot: null,
        },
      ],
      trailing: Buffer.from([0, 0, 0, 0, 1]),
    };
    expect(decodeDoom3Response(encodeDoom3Response(quake4))).toEqual(quake4);
    const etqw = {
      ...base,
      header: "infoExResponse" as const,
      etqwExtra: 0xffffffff,
      sizeField: 0,
      protocolMajor: 10,
      protocolMinor: 21,
      layout: "etqw" as const,
      players: [
        {
          id: 0,
          pingMs: 40,
          rate: null,
          name: "Name",
          clanTag: "[T]",
          clanTagPosition: 1,
          isBot: false,
        },
        { id: 3, pingMs: 0, rate: null, name: "bot", clanTag: "", clanTagPosition: 0, isBot: true },
      ],
      etqw: {
        ranked: false,
        timeLeftMs: 600000,
        gameState: 2,
        serverType: 0,
        interestedClients: 3,
        connectedClients: null,
        maxClients: null,
      },
      playersEx: [{ id: 0, xp: 1.5, team: "gdf", kills: 3, deaths: -1 }],
    };
    const bytes = encodeDoom3Response(etqw);
    const decoded = decodeDoom3Response(bytes);
    expect(decoded).toEqual({ ...etqw, sizeField: decoded.sizeField });
    expect(decoded.sizeField).toBe(bytes.length - 4 - (bytes.indexOf(0, 2) + 1 + 4 + 4 + 4));
  });

  it("Half-Life replies, split over GoldSrc datagrams", () => {
    const m = {
      type: "m" as const,
      address: "1.2.3.4:27015",
      hostname: "My Server",
      map: "de_dust",
      gamedir: "cstrike",
      description: "Counter-Strike",
      numPlayers: 5,
      maxPlayers: 20,
      protocol: 46,
      serverType: "d",
      os: "l",
      passwordProtected: false,
      mod: {
        infoUrl: "www.counter-strike.net",
        downloadUrl: "",
        reserved: 0,
        version: 1,
        sizeBytes: 184000000,
        serverSideOnly: false,
        customClientDll: true,
      },
      secure: false,
      bots: 0,
      trailing: Buffer.alloc(0),
    };
    expect(decodeHalfLifeMessage(encodeHalfLifeMessage(m))).toEqual(m);
    const e = {
      type: "E" as const,
      countField: 200,
      rules: Array.from({ length: 200 }, (_, i) => ({ key: `cvar_${i}`, value: String(i) })),
    };
    const parts = encodeGoldSrcSplit(encodeHalfLifeMessage(e), 77, 500);
    expect(parts.length).toBeGreaterThan(2);
    expect(decodeHalfLifeDatagrams([...parts].reverse())).toEqual([e]);
    const d = {
      type: "D" as const,
      countField: 1,
      players: [{ index: 1, name: "x", score: -2, durationSeconds: 12.5 }],
    };
    expect(decodeHalfLifeMessage(encodeHalfLifeMessage(d))).toEqual(d);
    const istr = {
      type: "infostring" as const,
      pairs: [
        { key: "hostname", value: "x" },
        { key: "players", value: "3" },
      ],
    };
    expect(decodeHalfLifeMessage(encodeHalfLifeMessage(istr))).toEqual(istr);
  });

  it("ASE", () => {
    const response: AseResponse = {
      gameName: "farcry",
      gamePort: "49001",
      hostname: "$3JAM",
      gameType: "FFA",
      map: "mp_monkeybay_n",
      version: "0.0.0.0",
      password: "0",
      numPlayers: "2",
      maxPlayers: "12",
      rules: [{ key: "sv_punkbuster", value: "1" }],
      players: [
        {
          flags: 0x3f,
          name: "PEGASE65",
          team: "players",
          skin: "",
          score: "3",
          ping: "60",
          time: "8m",
        },
        { flags: 0x11, name: "x", ping: "5" },
      ],
    };
    expect(decodeAseResponse(encodeAseResponse(response))).toEqual(response);
  });
});

describeWithShared("captures re-encode byte for byte", (sharedDir) => {
  const captures = loadLegacyCaptures(sharedDir);
  const oneDatagram = (protocols: string[]) =>
    captures.filter((c) => protocols.includes(c.protocol)).map((c) => [c.file, c] as const);

  it.each(oneDatagram(["quake3", "quake2"]))("%s", (_f, c) => {
    const [packet] = packetsOf(c);
    // Blank trailing lines (q3-codmw2-*) carry no data and are not reproduced.
    expect(encodeQuakeResponse(decodeQuakeResponse(packet!)).toString("latin1")).toBe(
      packet!.toString("latin1").replace(/\n+$/, "\n"),
    );
  });

  it.each(oneDatagram(["doom3", "doom3-quake4", "doom3-etqw", "doom3-etqw-infoex", "ase"]))(
    "%s",
    (_f, c) => {
      const [packet] = packetsOf(c);
      const again =
        c.protocol === "ase"
          ? encodeAseResponse(decodeAseResponse(packet!))
          : encodeDoom3Response(decodeDoom3Response(packet!));
      expect(hex(again)).toBe(hex(packet!));
    },
  );

  it.each(oneDatagram(["gamespy2"]))("%s", (_f, c) => {
    const requests = c.request_hex.map((h) => Buffer.from(h, "hex"));
    for (const packet of packetsOf(c)) {
      const request = requests.find((q) => q.subarray(3, 7).equals(packet.subarray(1, 5)))!;
      const d = decodeGamespy2Response(packet, {
        server: request[7] !== 0,
        players: request[8] !== 0,
        teams: request[9] !== 0,
      });
      expect(hex(encodeGamespy2Response(d))).toBe(hex(packet));
    }
  });
});
