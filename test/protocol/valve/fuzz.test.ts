/**
 * Fuzz: >= 100,000 random, truncated and mutated packets, seeded from the real captures (when
 * ../shared is present) and from our encoders, go through every decoder and the split assembler.
 * Each call must return a value (that serialises to JSON) or throw a ProtocolError: never another
 * exception, never a hang (the suite's timeout bounds it). Deterministic: a fixed PRNG seed.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import {
  decodeChallengeResponse,
  decodeInfoResponse,
  decodePingResponse,
  decodePlayersResponse,
  decodeRequest,
  decodeResponse,
  decodeRulesResponse,
  encodeChallengeResponse,
  encodeGetChallengeRequest,
  encodeInfoRequest,
  encodeInfoResponse,
  encodePingRequest,
  encodePingResponse,
  encodePlayerRequest,
  encodePlayersResponse,
  encodeRulesRequest,
  encodeRulesResponse,
  ProtocolError,
  SplitAssembler,
} from "../../../src/protocol";
import { splitResponse } from "../../../src/simulator/split-response";
import { mulberry32 } from "../../../src/simulator/random";
import { sharedDir } from "../../helpers/shared-dir";

const SEED = 0x5eed2026;
const SINGLE_ITERATIONS = 70_000;
const SPLIT_SEQUENCES = 10_000;

const random = mulberry32(SEED);
const int = (n: number): number => Math.floor(random() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
const INTERESTING = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x41, 0x44, 0x45, 0x49, 0x6d];

function randomBytes(length: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) b[i] = int(256);
  return b;
}

function mutate(input: Buffer, corpus: readonly Buffer[]): Buffer {
  const b = Buffer.from(input);
  switch (int(8)) {
    case 0:
      return b.subarray(0, int(b.length + 1));
    case 1: {
      for (let n = 1 + int(4); n > 0 && b.length > 0; n--) {
        const at = int(b.length);
        b[at] = (b[at] ?? 0) ^ (1 << int(8));
      }
      return b;
    }
    case 2: {
      for (let n = 1 + int(3); n > 0 && b.length > 0; n--) b[int(b.length)] = pick(INTERESTING);
      return b;
    }
    case 3: {
      const at = int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), randomBytes(1 + int(8)), b.subarray(at)]);
    }
    case 4: {
      const at = int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + int(16))]);
    }
    case 5: {
      const header = pick([
        Buffer.from("ffffffff", "hex"),
        Buffer.from("feffffff", "hex"),
        Buffer.alloc(0),
      ]);
      return Buffer.concat([header, randomBytes(int(64))]);
    }
    case 6: {
      const other = pick(corpus);
      return Buffer.concat([
        b.subarray(0, int(b.length + 1)),
        other.subarray(int(other.length + 1)),
      ]);
    }
    default: {
      // A header from the corpus, then the rest cut or random: the "type byte, no body" family.
      return Buffer.concat([b.subarray(0, Math.min(b.length, 4 + int(3))), randomBytes(int(3))]);
    }
  }
}

function encoderCorpus(): { singles: Buffer[]; splitSets: Buffer[][] } {
  const info = encodeInfoResponse({
    type: "source",
    protocol: 17,
    name: "fuzz",
    map: "de_dust2",
    folder: "csgo",
    game: "CS",
    appId: 730,
    players: 3,
    maxPlayers: 10,
    bots: 1,
    serverType: "d",
    environment: "l",
    visibility: 0,
    vac: 1,
    version: "1.0",
    edf: 0xf1,
    port: 27015,
    steamId: "90152145425397767",
    tvPort: 27020,
    tvName: "tv",
    keywords: "a,b",
    gameId: "730",
  });
  const ship = encodeInfoResponse({
    type: "source",
    protocol: 7,
    name: "s",
    map: "m",
    folder: "ship",
    game: "The Ship",
    appId: 2400,
    players: 1,
    maxPlayers: 2,
    bots: 0,
    serverType: "d",
    environment: "w",
    visibility: 0,
    vac: 0,
    theShip: { mode: 1, witnesses: 2, duration: 3 },
    version: "1",
  });
  const gold = encodeInfoResponse({
    type: "goldsrc",
    address: "127.0.0.1:27015",
    name: "g",
    map: "crossfire",
    folder: "valve",
    game: "HL",
    players: 1,
    maxPlayers: 8,
    protocol: 47,
    serverType: "d",
    environment: "l",
    visibility: 0,
    isMod: 1,
    mod: { url: "u", download: "d", version: 1, size: 2, type: 0, dll: 1 },
    vac: 1,
    bots: 0,
  });
  const players = Array.from({ length: 40 }, (_, i) => ({
    index: i,
    name: `player ${i}`,
    score: i - 20,
    duration: i * 1.5 - 3,
    deaths: i,
    money: i * 100,
  }));
  const playerReply = encodePlayersResponse({ count: 40, players });
  const shipPlayers = encodePlayersResponse({ count: 40, players }, { appId: 2400 });
  const rules = Array.from({ length: 120 }, (_, i) => ({
    name: `rule_${i}`,
    value: `value ${i} `.repeat(i % 7),
  }));
  const rulesReply = encodeRulesResponse({
    count: 120,
    rules: [...rules, { name: "bin", value: "\ufffd", valueHex: "ff80" }],
  });
  const challenge = Buffer.from("29f9d53c", "hex");
  const singles = [
    info,
    ship,
    gold,
    playerReply,
    shipPlayers,
    rulesReply,
    encodeChallengeResponse(challenge),
    encodePingResponse(),
    encodeInfoRequest(),
    encodeInfoRequest(challenge),
    encodePlayerRequest(),
    encodeRulesRequest(challenge),
    encodeGetChallengeRequest(),
    encodePingRequest(),
  ];
  const splitSets = [
    splitResponse(rulesReply, { format: "source", id: 1 }),
    splitResponse(rulesReply, { format: "source", id: 2, sizeField: false }),
    splitResponse(rulesReply, { format: "goldsrc", id: 3 }),
    splitResponse(rulesReply, { format: "source", id: 4, compress: true, maxPacketBytes: 300 }),
    splitResponse(shipPlayers, {
      format: "source",
      id: 5,
      compress: true,
      sizeField: false,
      maxPacketBytes: 200,
    }),
  ];
  return { singles, splitSets };
}

interface CaptureFile {
  packets_hex: string[];
  framing: { split?: boolean };
}

function captureCorpus(): { singles: Buffer[]; splitSets: Buffer[][] } {
  const dir = sharedDir();
  if (dir === null) return { singles: [], splitSets: [] };
  const captures = path.join(dir, "captures", "a2s");
  const singles: Buffer[] = [];
  const splitSets: Buffer[][] = [];
  for (const file of readdirSync(captures).filter((f) => f.endsWith(".json"))) {
    const capture = JSON.parse(readFileSync(path.join(captures, file), "utf8")) as CaptureFile;
    const datagrams = capture.packets_hex.map((h) => Buffer.from(h, "hex"));
    if (capture.framing.split) splitSets.push(datagrams);
    else singles.push(...datagrams);
  }
  return { singles, splitSets };
}

/** Every packet goes through the dispatcher and the request decoder, and through one of these in turn. */
const decoders: Array<(b: Buffer) => unknown> = [
  (b) => decodeResponse(b, { appId: 2400 }),
  (b) => decodeInfoResponse(b),
  (b) => decodePlayersResponse(b),
  (b) => decodePlayersResponse(b, { appId: 2400 }),
  (b) => decodeRulesResponse(b),
  (b) => decodeChallengeResponse(b),
  (b) => decodePingResponse(b),
];

describe("fuzz: every decoder and the split assembler", () => {
  const fromEncoders = encoderCorpus();
  const fromCaptures = captureCorpus();
  if (fromCaptures.singles.length === 0)
    console.warn("fuzz: ../shared absent, seeding from the encoders only");
  const singles = [...fromEncoders.singles, ...fromCaptures.singles];
  const splitSets = [...fromEncoders.splitSets, ...fromCaptures.splitSets];
  const failures: string[] = [];
  let packets = 0;
  let values = 0;
  let reassembled = 0;

  function check(label: string, input: Buffer, fn: () => unknown): unknown {
    try {
      const value = fn();
      JSON.stringify(value);
      values++;
      return value;
    } catch (err) {
      if (!(err instanceof ProtocolError) && failures.length < 10)
        failures.push(
          `${label} ${input.toString("hex").slice(0, 200)}: ${err instanceof Error ? err.stack : String(err)}`,
        );
      return undefined;
    }
  }

  it(`${SINGLE_ITERATIONS} mutated single packets through every decoder`, () => {
    for (let i = 0; i < SINGLE_ITERATIONS; i++) {
      const packet = mutate(pick(singles), singles);
      const decode = decoders[i % decoders.length]!;
      packets++;
      check("decodeResponse", packet, () => decodeResponse(packet));
      check("decodeRequest", packet, () => decodeRequest(packet));
      check(`decoder ${i % decoders.length}`, packet, () => decode(packet));
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it(`${SPLIT_SEQUENCES} mutated, reordered, duplicated and dropped fragment sequences through the split assembler`, () => {
    for (let i = 0; i < SPLIT_SEQUENCES; i++) {
      const set = pick(splitSets);
      const assembler = new SplitAssembler();
      const sequence: Buffer[] = [];
      for (const fragment of set) {
        const roll = random();
        if (roll < 0.1) continue; // dropped
        sequence.push(roll < 0.45 ? mutate(fragment, set) : fragment);
        if (roll > 0.9) sequence.push(fragment); // duplicated
      }
      if (random() < 0.2) sequence.push(mutate(pick(singles), singles));
      for (let k = sequence.length - 1; k > 0; k--) {
        const j = int(k + 1);
        [sequence[k], sequence[j]] = [sequence[j]!, sequence[k]!];
      }
      for (const datagram of sequence) {
        packets++;
        const payload = check("assembler", datagram, () => assembler.push(datagram));
        if (!Buffer.isBuffer(payload)) continue;
        reassembled++;
        check("reassembled", payload, () => decodeResponse(payload));
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it("pushed at least 100,000 packets in all", () => {
    expect(packets).toBeGreaterThanOrEqual(100_000);
    // Not vacuous: many inputs still decode, and many mutated sequences still reassemble.
    expect(values).toBeGreaterThan(10_000);
    expect(reassembled).toBeGreaterThan(1_000);
  });
});
