/**
 * Fuzz: >= 100,000 random, truncated and mutated datagrams (deterministic seed, seeded from the
 * captures) through every legacy decoder, assembler and normaliser. Each must return a value or
 * throw a ProtocolError; any other exception fails with the input that caused it.
 */
import {
  decodeLegacyStatus,
  decodeQuake3MasterResponse,
  encodeQuake3MasterResponse,
  type LegacyProtocol,
  ProtocolError,
} from "../../../src/protocol";
import { decodeAseResponse } from "../../../src/protocol/legacy/ase";
import { decodeDoom3Response } from "../../../src/protocol/legacy/doom3";
import {
  Gamespy1Assembler,
  decodeGamespy1Datagram,
  groupGamespy1Pairs,
} from "../../../src/protocol/legacy/gamespy1";
import { decodeGamespy2Response } from "../../../src/protocol/legacy/gamespy2";
import {
  Gamespy3Assembler,
  decodeGamespy3ChallengeResponse,
  decodeGamespy3Datagram,
  decodeJc2mpResponse,
} from "../../../src/protocol/legacy/gamespy3";
import {
  decodeHalfLifeDatagrams,
  decodeHalfLifeMessage,
} from "../../../src/protocol/legacy/halflife";
import { decodeQuakeResponse } from "../../../src/protocol/legacy/quake3";
import { mulberry32 } from "../../../src/simulator/random";
import { sharedDir } from "../../helpers/shared-dir";
import { loadLegacyCaptures, packetsOf } from "./capture-files";

const SEED = 0x1e6ac7;
const ITERATIONS = 100_000;

const DECODERS: ReadonlyArray<[string, (p: Buffer) => unknown]> = [
  ["quake", (p) => decodeQuakeResponse(p)],
  ["gamespy1", (p) => groupGamespy1Pairs(decodeGamespy1Datagram(p).pairs)],
  ["gamespy2", (p) => decodeGamespy2Response(p)],
  [
    "gamespy2-players",
    (p) => decodeGamespy2Response(p, { server: false, players: true, teams: true }),
  ],
  ["gamespy3", (p) => decodeGamespy3Datagram(p)],
  ["gamespy3-challenge", (p) => decodeGamespy3ChallengeResponse(p)],
  ["jc2mp", (p) => decodeJc2mpResponse(p)],
  ["doom3", (p) => decodeDoom3Response(p)],
  ["halflife", (p) => decodeHalfLifeMessage(p)],
  ["ase", (p) => decodeAseResponse(p)],
  ["quake3-master", (p) => decodeQuake3MasterResponse(p)],
];

const STATUS_PROTOCOLS: readonly LegacyProtocol[] = [
  "quake2",
  "quake3",
  "gamespy1",
  "gamespy2",
  "gamespy3",
  "doom3",
  "halflife",
  "ase",
];

function check(label: string, input: readonly Buffer[], run: () => unknown): void {
  try {
    run();
  } catch (err) {
    if (err instanceof ProtocolError) return;
    throw new Error(
      `${label} threw a non-ProtocolError for ${input.map((b) => b.toString("hex")).join(" | ")}: ${String(err)}`,
      { cause: err },
    );
  }
}

function mutate(next: () => number, seed: Buffer): Buffer {
  const out = Buffer.from(seed);
  const pick = (n: number): number => Math.floor(next() * n);
  switch (pick(6)) {
    case 0: // truncate
      return out.subarray(0, pick(out.length + 1));
    case 1: // flip some bytes
      for (let i = 0, n = 1 + pick(4); i < n && out.length > 0; i += 1)
        out[pick(out.length)] = pick(256);
      return out;
    case 2: // flip a byte to a delimiter the parsers care about
      if (out.length > 0)
        out[pick(out.length)] = [0x00, 0x01, 0x02, 0x5c, 0x0a, 0x22, 0x20, 0xff, 0x80][pick(9)]!;
      return out;
    case 3: {
      // delete a slice
      const start = pick(out.length + 1);
      return Buffer.concat([out.subarray(0, start), out.subarray(start + pick(16))]);
    }
    case 4: {
      // insert random bytes
      const start = pick(out.length + 1);
      const extra = Buffer.from(Array.from({ length: 1 + pick(8) }, () => pick(256)));
      return Buffer.concat([out.subarray(0, start), extra, out.subarray(start)]);
    }
    default: // random bytes with a real header
      return Buffer.concat([
        out.subarray(0, pick(Math.min(16, out.length) + 1)),
        Buffer.from(Array.from({ length: pick(64) }, () => pick(256))),
      ]);
  }
}

describe("legacy decoders under fuzzing", () => {
  const dir = sharedDir();
  const seeds: Buffer[] = dir === null ? [] : loadLegacyCaptures(dir).flatMap(packetsOf);
  // Without ../shared the fuzz still runs, seeded from constructed headers.
  const fallbackSeeds = [
    "ffffffff737461747573526573706f6e73650a5c615c620a3120322022782220330a",
    "5c686f73746e616d655c785c717565727969645c312e315c66696e616c5c",
    "0001020304686f73740078000000010070000061000000",
    "ffff696e666f526573706f6e736500010000002900010000000020070000004",
    "455945310466617201010101010101010101",
    "ffffffff4401017800010000000000c03f",
  ].map((h) => Buffer.from(h.length % 2 === 0 ? h : `${h}0`, "hex"));
  // Master listings (constructed: no capture exists), incl. IPv6 records, join the pool.
  const masterSeeds = [
    ...encodeQuake3MasterResponse(
      [
        { host: "92.92.92.92", port: 27960 },
        { host: "69.79.84.1", port: 1 },
      ],
      { perDatagram: 1 },
    ),
    ...encodeQuake3MasterResponse([{ host: "2001:db8::5c", port: 26000 }], { extended: true }),
  ];
  const pool = [...(seeds.length > 0 ? seeds : fallbackSeeds), ...masterSeeds];

  it(`survives ${ITERATIONS} mutated datagrams (seed ${SEED})`, () => {
    const next = mulberry32(SEED);
    let runs = 0;
    for (let i = 0; i < ITERATIONS; i += 1) {
      const seed = pool[Math.floor(next() * pool.length)]!;
      const packet =
        next() < 0.05
          ? Buffer.from(
              Array.from({ length: Math.floor(next() * 200) }, () => Math.floor(next() * 256)),
            )
          : mutate(next, seed);
      const [label, decode] = DECODERS[Math.floor(next() * DECODERS.length)]!;
      check(label, [packet], () => decode(packet));
      runs += 1;
    }
    expect(runs).toBe(ITERATIONS);
  }, 120_000);

  it("survives mutated multi-datagram replies through the assemblers and normalisers", () => {
    const next = mulberry32(SEED + 1);
    for (let i = 0; i < 4000; i += 1) {
      const count = 1 + Math.floor(next() * 4);
      const packets = Array.from({ length: count }, () =>
        mutate(next, pool[Math.floor(next() * pool.length)]!),
      );
      check("gamespy1 assembler", packets, () => {
        const a = new Gamespy1Assembler();
        for (const p of packets) a.push(p);
        return a.result();
      });
      check("gamespy3 assembler", packets, () => {
        const a = new Gamespy3Assembler();
        for (const p of packets) a.push(p);
        return a.result();
      });
      check("goldsrc split", packets, () => decodeHalfLifeDatagrams(packets));
      const protocol = STATUS_PROTOCOLS[Math.floor(next() * STATUS_PROTOCOLS.length)]!;
      check(`status ${protocol}`, packets, () => decodeLegacyStatus(protocol, packets));
    }
  }, 60_000);

  it("normalises every capture under light mutation without non-protocol errors", () => {
    const next = mulberry32(SEED + 2);
    for (let i = 0; i < 3000; i += 1) {
      const packet = mutate(next, pool[Math.floor(next() * pool.length)]!);
      for (const protocol of STATUS_PROTOCOLS)
        check(`status ${protocol}`, [packet], () => decodeLegacyStatus(protocol, [packet]));
    }
  }, 60_000);
});
