/**
 * Round-trip properties: decode(encode(x)) == x for every response encoder the simulator speaks
 * through, and split reassembly returns the exact payload whatever the order and duplication of
 * the fragments (fast-check, fixed seeds so failures replay).
 */
import fc from "fast-check";
import {
  decodeRequest,
  decodeResponse,
  encodeChallengeResponse,
  encodeInfoRequest,
  encodeInfoResponse,
  encodePlayerRequest,
  encodePlayersResponse,
  encodeRulesRequest,
  encodeRulesResponse,
  SplitAssembler,
  type GoldSrcInfo,
  type Player,
  type Rule,
  type SourceInfo,
} from "../../../src/protocol";
import { splitResponse } from "../../../src/simulator/split-response";
import { decodeUtf8Exact } from "../../../src/protocol/wire/packet-reader";

const params = { seed: 20261122, numRuns: 300 };

/** A wire string: valid UTF-8 text, or arbitrary non-NUL bytes (then the exact bytes ride along as hex). */
const wireText = fc.oneof(
  fc
    .string({ maxLength: 40 })
    .filter((s) => !s.includes("\0"))
    .map((value) => ({ value, hex: undefined as string | undefined })),
  fc
    .uint8Array({ minLength: 1, maxLength: 40 })
    .map((bytes) => Buffer.from(bytes.map((b) => (b === 0 ? 1 : b))))
    .map((bytes) => decodeUtf8Exact(bytes)),
);
const u8 = fc.integer({ min: 0, max: 255 });
const u16 = fc.integer({ min: 0, max: 0xffff });
const u64 = fc.bigInt({ min: 0n, max: 0xffffffffffffffffn }).map((b) => b.toString());
const char = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));

function withHex<T extends object>(
  target: T,
  field: string,
  text: { value: string; hex?: string | undefined },
): T {
  const out = { ...target, [field]: text.value } as Record<string, unknown>;
  if (text.hex !== undefined) out[`${field}Hex`] = text.hex;
  return out as T;
}

const sourceInfo: fc.Arbitrary<SourceInfo> = fc
  .record({
    protocol: u8,
    name: wireText,
    map: wireText,
    folder: wireText,
    game: wireText,
    appId: u16,
    players: u8,
    maxPlayers: u8,
    bots: u8,
    serverType: char,
    environment: char,
    visibility: u8,
    vac: fc.integer({ min: 0, max: 1 }),
    version: wireText,
    theShip: fc.record({ mode: u8, witnesses: u8, duration: u8 }),
    edf: fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }),
    port: u16,
    steamId: u64,
    tvPort: u16,
    tvName: wireText,
    keywords: wireText,
    gameId: u64,
  })
  .map((r) => {
    let info: SourceInfo = {
      type: "source",
      protocol: r.protocol,
      name: "",
      map: "",
      folder: "",
      game: "",
      appId: r.appId,
      players: r.players,
      maxPlayers: r.maxPlayers,
      bots: r.bots,
      serverType: r.serverType,
      environment: r.environment,
      visibility: r.visibility,
      vac: r.vac,
      version: "",
    };
    for (const field of ["name", "map", "folder", "game", "version"] as const)
      info = withHex(info, field, r[field]);
    if (r.appId === 2400) info.theShip = r.theShip;
    if (r.edf === undefined) return info;
    info.edf = r.edf;
    if (r.edf & 0x80) info.port = r.port;
    if (r.edf & 0x10) info.steamId = r.steamId;
    if (r.edf & 0x40) info = withHex({ ...info, tvPort: r.tvPort }, "tvName", r.tvName);
    if (r.edf & 0x20) info = withHex(info, "keywords", r.keywords);
    if (r.edf & 0x01) info.gameId = r.gameId;
    return info;
  });

const shipSourceInfo = sourceInfo.map((info) => ({
  ...info,
  appId: 2400,
  theShip: { mode: 1, witnesses: 2, duration: 3 },
}));

const goldSrcInfo: fc.Arbitrary<GoldSrcInfo> = fc
  .record({
    address: fc.string({ maxLength: 21 }).filter((s) => !s.includes("\0")),
    name: wireText,
    map: wireText,
    folder: wireText,
    game: wireText,
    players: u8,
    maxPlayers: u8,
    protocol: u8,
    serverType: char,
    environment: char,
    visibility: u8,
    isMod: fc.integer({ min: 0, max: 2 }),
    vac: fc.integer({ min: 0, max: 1 }),
    bots: u8,
    mod: fc.record({
      url: fc.string({ maxLength: 20 }).filter((s) => !s.includes("\0")),
      download: fc.string({ maxLength: 20 }).filter((s) => !s.includes("\0")),
      version: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      size: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      type: u8,
      dll: u8,
    }),
  })
  .map((r) => {
    let info: GoldSrcInfo = {
      type: "goldsrc",
      address: r.address,
      name: "",
      map: "",
      folder: "",
      game: "",
      players: r.players,
      maxPlayers: r.maxPlayers,
      protocol: r.protocol,
      serverType: r.serverType,
      environment: r.environment,
      visibility: r.visibility,
      isMod: r.isMod,
      vac: r.vac,
      bots: r.bots,
    };
    for (const field of ["name", "map", "folder", "game"] as const)
      info = withHex(info, field, r[field]);
    if (r.isMod === 1) info.mod = r.mod;
    return info;
  });

const player = (ship: boolean): fc.Arbitrary<Player> =>
  fc
    .record({
      index: u8,
      name: wireText,
      score: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      duration: fc.float(),
      deaths: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      money: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    })
    .map((r) => {
      const p = withHex(
        { index: r.index, name: "", score: r.score, duration: r.duration } as Player,
        "name",
        r.name,
      );
      return ship ? { ...p, deaths: r.deaths, money: r.money } : p;
    });

const rule: fc.Arbitrary<Rule> = fc
  .record({ name: wireText, value: wireText })
  .map((r) => withHex(withHex({ name: "", value: "" } as Rule, "name", r.name), "value", r.value));

describe("response encoders round-trip through decodeResponse", () => {
  it("Source A2S_INFO (EDF fields, The Ship, binary strings)", () => {
    fc.assert(
      fc.property(fc.oneof(sourceInfo, shipSourceInfo), (info) => {
        expect(decodeResponse(encodeInfoResponse(info))).toEqual({ kind: "info", value: info });
      }),
      params,
    );
  });

  it("GoldSrc A2S_INFO (mod block)", () => {
    fc.assert(
      fc.property(goldSrcInfo, (info) => {
        expect(decodeResponse(encodeInfoResponse(info))).toEqual({ kind: "info", value: info });
      }),
      params,
    );
  });

  it("A2S_PLAYER, including more than 255 players (count byte wraps) and negative scores/durations", () => {
    fc.assert(
      fc.property(fc.array(player(false), { maxLength: 300 }), (players) => {
        const result = { count: players.length & 0xff, players };
        expect(decodeResponse(encodePlayersResponse(result))).toEqual({
          kind: "players",
          value: result,
        });
      }),
      { ...params, numRuns: 100 },
    );
  });

  it("A2S_PLAYER in The Ship's layout (deaths and money after all entries)", () => {
    fc.assert(
      fc.property(fc.array(player(true), { maxLength: 40 }), (players) => {
        const result = { count: players.length, players };
        expect(
          decodeResponse(encodePlayersResponse(result, { appId: 2400 }), { appId: 2400 }),
        ).toEqual({ kind: "players", value: result });
      }),
      params,
    );
  });

  it("A2S_RULES, byte-exact binary values, duplicates kept in order", () => {
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 60 }), (rules) => {
        const result = { count: rules.length, rules };
        expect(decodeResponse(encodeRulesResponse(result))).toEqual({
          kind: "rules",
          value: result,
        });
      }),
      params,
    );
  });

  it("S2C_CHALLENGE and the requests echo the 4 challenge bytes verbatim", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => Buffer.from(b)),
        (challenge) => {
          expect(decodeResponse(encodeChallengeResponse(challenge))).toEqual({
            kind: "challenge",
            value: { challenge: challenge.readInt32LE(0), challengeHex: challenge.toString("hex") },
          });
          const echoed = challenge.equals(Buffer.from("ffffffff", "hex")) ? {} : { challenge };
          expect(decodeRequest(encodeInfoRequest(challenge))).toEqual({ kind: "info", ...echoed });
          expect(decodeRequest(encodePlayerRequest(challenge))).toEqual({
            kind: "players",
            ...echoed,
          });
          expect(decodeRequest(encodeRulesRequest(challenge))).toEqual({
            kind: "rules",
            ...echoed,
          });
        },
      ),
      params,
    );
    expect(decodeRequest(encodePlayerRequest())).toEqual({ kind: "players" });
  });
});

describe("split reassembly", () => {
  const payload = fc
    .uint8Array({ minLength: 2, maxLength: 9000 })
    .map((b) => Buffer.concat([Buffer.from("ffffffff", "hex"), Buffer.from(b)]));
  const fragmentOrder = fc.array(fc.nat(), { maxLength: 300 });

  /** Delivers fragments in an arbitrary order with arbitrary duplicates; returns what push() yielded. */
  function deliver(fragments: Buffer[], order: number[]): Buffer[] {
    const sequence = [...fragments];
    for (const n of order)
      sequence.splice(n % (sequence.length + 1), 0, fragments[n % fragments.length]!);
    // A shuffle driven by `order`, then every fragment at least once.
    const assembler = new SplitAssembler();
    const completed: Buffer[] = [];
    const shuffled = sequence
      .map((f, i) => ({ f, k: order[i % Math.max(order.length, 1)] ?? i }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.f);
    for (const f of shuffled) {
      const out = assembler.push(f);
      if (out !== null) completed.push(out);
    }
    return completed;
  }

  it("Source (with or without the size field) and GoldSrc: any order, duplicates: exactly one payload, byte-exact", () => {
    fc.assert(
      fc.property(
        payload,
        fc.constantFrom("source", "goldsrc") as fc.Arbitrary<"source" | "goldsrc">,
        fc.boolean(),
        fc.integer({ min: 600, max: 1400 }),
        fc.integer({ min: 0, max: 0x7fffffff }),
        fragmentOrder,
        (data, format, sizeField, maxPacketBytes, id, order) => {
          fc.pre(format === "source" || data.length <= 15 * maxPacketBytes);
          const fragments = splitResponse(data, { format, id, sizeField, maxPacketBytes });
          expect(deliver(fragments, order)).toEqual([data]);
        },
      ),
      params,
    );
  });

  it("bzip2-compressed Source splits reassemble to the exact payload (few runs: compression spawns bzip2)", () => {
    fc.assert(
      fc.property(payload, fc.boolean(), fragmentOrder, (data, sizeField, order) => {
        const fragments = splitResponse(data, {
          format: "source",
          id: 77,
          compress: true,
          sizeField,
          maxPacketBytes: 700,
        });
        expect(deliver(fragments, order)).toEqual([data]);
      }),
      { ...params, numRuns: 15 },
    );
  });

  it("two responses interleaved are assembled apart", () => {
    const a = Buffer.concat([Buffer.from("ffffffff45", "hex"), Buffer.alloc(5000, 1)]);
    const b = Buffer.concat([Buffer.from("ffffffff44", "hex"), Buffer.alloc(3000, 2)]);
    const fa = splitResponse(a, { format: "source", id: 1 });
    const fb = splitResponse(b, { format: "source", id: 2 });
    const assembler = new SplitAssembler();
    const out = [fa[0], fb[1], fa[2], fb[0], fa[1], fb[2], fa[3], fa[4]]
      .map((f) => assembler.push(f!))
      .filter((x) => x !== null);
    expect(out).toEqual([b, a]);
  });
});
