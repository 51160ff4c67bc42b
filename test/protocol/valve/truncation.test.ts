/**
 * Truncation and junk, decoder by decoder: every prefix of a valid reply is either a TRUNCATED
 * error (INFO, challenge: fixed layouts) or a value marked truncated (PLAYER, RULES lists); requests
 * the simulator cannot read are ProtocolErrors.
 */
import {
  decodeChallengeResponse,
  decodeInfoResponse,
  decodePlayersResponse,
  decodeRequest,
  decodeRulesResponse,
  encodeChallengeResponse,
  encodeInfoResponse,
  encodePlayersResponse,
  encodeRulesResponse,
  ProtocolError,
} from "../../../src/protocol";

const prefixes = (b: Buffer): Buffer[] =>
  Array.from({ length: b.length }, (_, n) => b.subarray(0, n));

function errorOf(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
  throw new Error("expected a ProtocolError");
}

describe("truncated replies", () => {
  it("Source INFO: every prefix that cuts a fixed field is TRUNCATED at an offset inside the packet", () => {
    const full = encodeInfoResponse({
      type: "source",
      protocol: 17,
      name: "n",
      map: "m",
      folder: "f",
      game: "g",
      appId: 2400,
      players: 1,
      maxPlayers: 2,
      bots: 0,
      serverType: "d",
      environment: "l",
      visibility: 0,
      vac: 1,
      theShip: { mode: 1, witnesses: 2, duration: 3 },
      version: "v",
      edf: 0xb1,
      port: 1,
      steamId: "2",
      keywords: "k",
      gameId: "3",
    });
    const versionEnd = full.indexOf("v\0", 0, "latin1") + 2;
    for (const prefix of prefixes(full)) {
      if (prefix.length === versionEnd) {
        expect(decodeInfoResponse(prefix)).not.toHaveProperty("edf"); // EDF is optional
        continue;
      }
      const err = errorOf(() => decodeInfoResponse(prefix));
      expect(err.code).toBe("TRUNCATED");
      expect(err.offset).toBeLessThanOrEqual(prefix.length);
    }
  });

  it("GoldSrc INFO: only the trailing bots byte may be missing (HLTV)", () => {
    const full = encodeInfoResponse({
      type: "goldsrc",
      address: "a",
      name: "n",
      map: "m",
      folder: "f",
      game: "g",
      players: 1,
      maxPlayers: 2,
      protocol: 48,
      serverType: "p",
      environment: "w",
      visibility: 0,
      isMod: 0,
      vac: 0,
      bots: 0,
    });
    expect(decodeInfoResponse(full.subarray(0, full.length - 1))).toMatchObject({
      type: "goldsrc",
      bots: 0,
    });
    for (const prefix of prefixes(full.subarray(0, full.length - 1)))
      expect(errorOf(() => decodeInfoResponse(prefix)).code).toBe("TRUNCATED");
  });

  it("PLAYER: every prefix past the count byte is a value with the complete entries and truncated: true", () => {
    const players = [0, 1, 2].map((i) => ({
      index: i,
      name: `p${i}`,
      score: 5 - 3 * i,
      duration: -1,
    }));
    const full = encodePlayersResponse({ count: 3, players });
    for (const prefix of prefixes(full)) {
      if (prefix.length < 6) {
        expect(errorOf(() => decodePlayersResponse(prefix)).code).toBe("TRUNCATED");
        continue;
      }
      const value = decodePlayersResponse(prefix);
      expect(value.truncated).toBe(true);
      expect(value.count).toBe(3);
      expect(players.slice(0, value.players.length)).toEqual(value.players);
    }
  });

  it("RULES: every prefix past the count is a value with the complete pairs and truncated: true", () => {
    const rules = [
      { name: "a", value: "1" },
      { name: "b", value: "2" },
    ];
    const full = encodeRulesResponse({ count: 2, rules });
    for (const prefix of prefixes(full)) {
      if (prefix.length < 7) {
        expect(errorOf(() => decodeRulesResponse(prefix)).code).toBe("TRUNCATED");
        continue;
      }
      const value = decodeRulesResponse(prefix);
      expect(value).toMatchObject({ count: 2, truncated: true });
      expect(rules.slice(0, value.rules.length)).toEqual(value.rules);
    }
  });

  it("challenge: a reply shorter than 4 challenge bytes is TRUNCATED", () => {
    const full = encodeChallengeResponse(Buffer.from("01020304", "hex"));
    for (const prefix of prefixes(full))
      expect(errorOf(() => decodeChallengeResponse(prefix)).code).toBe("TRUNCATED");
  });

  it("a reply of another kind is UNEXPECTED_RESPONSE at offset 4; a split fragment is MALFORMED", () => {
    expect(errorOf(() => decodeRulesResponse(Buffer.from("ffffffff4400", "hex")))).toMatchObject({
      code: "UNEXPECTED_RESPONSE",
      offset: 4,
    });
    expect(
      errorOf(() => decodeInfoResponse(Buffer.from("feffffff0100000002", "hex"))),
    ).toMatchObject({ code: "MALFORMED", offset: 0 });
  });
});

describe("decodeRequest rejects what no client sends", () => {
  it.each([
    ["empty", ""],
    ["unknown type", "ffffffff58"],
    ["INFO with another string", "ffffffff54536f7572636500"],
    ["INFO with a 3-byte challenge", "ffffffff54536f7572636520456e67696e6520517565727900010203"],
    ["PLAYER with a 2-byte challenge", "ffffffff550102"],
    ["a reply, not a request", "ffffffff4400"],
  ])("%s", (_name, hex) => {
    expect(() => decodeRequest(Buffer.from(hex, "hex"))).toThrow(ProtocolError);
  });

  it("a PLAYER request without any challenge bytes asks for one", () => {
    expect(decodeRequest(Buffer.from("ffffffff55", "hex"))).toEqual({ kind: "players" });
  });
});

describe("encoders refuse out-of-range fields with a coded error", () => {
  it("an app id above 65535 or a score beyond int32 is INVALID_ARGUMENT", () => {
    const info = {
      type: "source",
      protocol: 17,
      name: "n",
      map: "m",
      folder: "f",
      game: "g",
      appId: 221100,
      players: 1,
      maxPlayers: 2,
      bots: 0,
      serverType: "d",
      environment: "l",
      visibility: 0,
      vac: 1,
      version: "v",
    } as const;
    expect(errorOf(() => encodeInfoResponse(info)).code).toBe("INVALID_ARGUMENT");
    expect(
      errorOf(() =>
        encodePlayersResponse({
          count: 1,
          players: [{ index: 0, name: "p", score: 2 ** 31, duration: 0 }],
        }),
      ).code,
    ).toBe("INVALID_ARGUMENT");
    expect(errorOf(() => encodeInfoResponse({ ...info, appId: 1, steamId: "x" })).code).toBe(
      "INVALID_ARGUMENT",
    );
  });
});
