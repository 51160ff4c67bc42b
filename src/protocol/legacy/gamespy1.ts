/**
 * GameSpy v1 ("QR1", backslash protocol): `\status\` and friends, replies split over datagrams.
 *
 * Spec: docs/protocols-legacy.md; GameDig's and qstat's GameSpy v1 readers.
 *
 * | datagram part         | meaning                                                              |
 * |-----------------------|----------------------------------------------------------------------|
 * | \key\value…           | plain backslash text, no terminator, values may be empty             |
 * | \queryid\Q.N          | Q = per-request serial, N = 1-based datagram number (N may be absent) |
 * | \final\               | empty-valued key in the LAST datagram only, before or after queryid,  |
 * |                       | or alone in a tiny datagram (MOHAA: `\final\\queryid\Q.N`)            |
 *
 * Reassembly: ignore datagrams of another Q, number datagrams without N in arrival order,
 * complete when `final` was seen in datagram F and 1…F are present, concatenate in N order, later
 * duplicates overwrite. Deviations: gs1-ut99-* (`\final\` after queryid), gs1-bf1942-1 (final
 * before queryid, a player's keys split across datagrams), gs1-mohaa-1 (final alone).
 */
import { ProtocolError } from "../errors";
import { BACKSLASH, decodeText, encodeText, splitBytes } from "./text";
import type { KeyValue, LegacyDecodeOptions, TextEncoding } from "./text";

export type Gamespy1Section = "basic" | "info" | "rules" | "players" | "status" | "teams";

/**
 * `\status\` by default; sections can be combined (`\info\\rules\`). `xserverquery` asks UT99
 * servers running XServerQuery for richer data; others ignore it.
 */
export function encodeGamespy1Request(
  sections: readonly Gamespy1Section[] = ["status"],
  options: { xserverquery?: boolean } = {},
): Buffer {
  if (sections.length === 0)
    throw new ProtocolError("INVALID_ARGUMENT", "at least one GameSpy v1 section is needed");
  const suffix = options.xserverquery === true ? "xserverquery" : "";
  return Buffer.from(sections.map((s) => `\\${s}\\`).join("") + suffix, "latin1");
}

export interface Gamespy1Datagram {
  /** Key/values in wire order, without `queryid` and `final`. */
  pairs: KeyValue[];
  /** Q of `\queryid\Q.N`, or null when the datagram carried no queryid. */
  queryId: number | null;
  /** N of `\queryid\Q.N` (1-based), or null when absent. */
  packetNumber: number | null;
  /** The raw queryid text, or null. */
  queryIdText: string | null;
  isFinal: boolean;
}

export function decodeGamespy1Datagram(
  packet: Buffer,
  options: LegacyDecodeOptions = {},
): Gamespy1Datagram {
  const encoding = options.encoding ?? "latin1";
  if (packet.length === 0)
    throw new ProtocolError("TRUNCATED", "empty GameSpy v1 datagram", { offset: 0 });
  if (packet[0] !== BACKSLASH) {
    throw new ProtocolError("UNEXPECTED_RESPONSE", "GameSpy v1 reply must start with a backslash", {
      offset: 0,
    });
  }
  const parts = splitBytes(packet.subarray(1), BACKSLASH);
  const pairs: KeyValue[] = [];
  let queryIdText: string | null = null;
  let isFinal = false;
  let offset = 1;
  for (let i = 0; i < parts.length; i += 2) {
    const keyBytes = parts[i]!;
    const valueBytes = parts[i + 1];
    const key = decodeText(keyBytes, encoding);
    // A datagram ending in `\` leaves one empty trailing element: not a key.
    if (valueBytes === undefined && keyBytes.length === 0) break;
    const value = decodeText(valueBytes ?? Buffer.alloc(0), encoding);
    if (key === "final") isFinal = true;
    else if (key === "queryid") {
      if (!/^\d+(\.\d+)?$/.test(value)) {
        throw new ProtocolError("MALFORMED", `queryid '${value.slice(0, 24)}' is not Q or Q.N`, {
          offset: offset + keyBytes.length + 1,
        });
      }
      queryIdText = value;
    } else {
      pairs.push({ key, value });
    }
    offset += keyBytes.length + 1 + (valueBytes === undefined ? 0 : valueBytes.length + 1);
  }
  let queryId: number | null = null;
  let packetNumber: number | null = null;
  if (queryIdText !== null) {
    const [q, n] = queryIdText.split(".");
    queryId = Number.parseInt(q!, 10);
    packetNumber = n === undefined ? null : Number.parseInt(n, 10);
    if (
      !Number.isSafeInteger(queryId) ||
      (packetNumber !== null && !Number.isSafeInteger(packetNumber))
    ) {
      throw new ProtocolError("MALFORMED", "queryid out of range");
    }
  }
  return { pairs, queryId, packetNumber, queryIdText, isFinal };
}

export interface Gamespy1Response {
  /** All key/values of the accepted datagrams, concatenated in datagram order. */
  pairs: KeyValue[];
  /** The accepted datagrams in datagram order (queryid + final flag), for diagnostics. */
  datagrams: Array<{ queryIdText: string | null; isFinal: boolean }>;
  /** False when the completion rule was not met (lost datagram, no `\final\`): data is what arrived. */
  complete: boolean;
}

/** Most datagrams a reply may have before it is refused (UE1 sends one per player; 64 players + sections). */
export const GAMESPY1_MAX_DATAGRAMS = 128;

/**
 * Collects the datagrams of one GameSpy v1 reply. `push` returns true once the reply is complete.
 * Datagrams of another query serial (late answers to an earlier retry) are ignored.
 */
export class Gamespy1Assembler {
  private queryId: number | null = null;
  private readonly byNumber = new Map<number, Gamespy1Datagram>();
  private arrival = 0;
  private finalNumber: number | null = null;

  constructor(private readonly options: LegacyDecodeOptions = {}) {}

  push(packet: Buffer): boolean {
    const datagram = decodeGamespy1Datagram(packet, this.options);
    if (datagram.queryId !== null) {
      if (this.queryId === null) this.queryId = datagram.queryId;
      else if (datagram.queryId !== this.queryId) return this.isComplete;
    }
    this.arrival += 1;
    const number = datagram.packetNumber ?? this.arrival;
    if (!this.byNumber.has(number)) {
      if (this.byNumber.size >= GAMESPY1_MAX_DATAGRAMS) {
        throw new ProtocolError(
          "SPLIT_LIMIT",
          `GameSpy v1 reply exceeds ${GAMESPY1_MAX_DATAGRAMS} datagrams`,
        );
      }
      this.byNumber.set(number, datagram);
    }
    if (datagram.isFinal) this.finalNumber = number;
    return this.isComplete;
  }

  get isComplete(): boolean {
    if (this.finalNumber === null) return false;
    for (let n = 1; n <= this.finalNumber; n += 1) if (!this.byNumber.has(n)) return false;
    return true;
  }

  get datagramCount(): number {
    return this.byNumber.size;
  }

  result(): Gamespy1Response {
    const numbers = [...this.byNumber.keys()].sort((a, b) => a - b);
    const ordered = numbers.map((n) => this.byNumber.get(n)!);
    return {
      pairs: ordered.flatMap((d) => d.pairs),
      datagrams: ordered.map((d) => ({ queryIdText: d.queryIdText, isFinal: d.isFinal })),
      complete: this.isComplete,
    };
  }
}

/** Decode a whole reply from its datagrams (any order). */
export function decodeGamespy1Response(
  packets: readonly Buffer[],
  options: LegacyDecodeOptions = {},
): Gamespy1Response {
  const assembler = new Gamespy1Assembler(options);
  for (const packet of packets) assembler.push(packet);
  return assembler.result();
}

export interface Gamespy1Record {
  index: number;
  /** Field base name (`player`, `frags`, `ping`, …) → raw value. */
  fields: Record<string, string>;
}

export interface Gamespy1Grouped {
  /** Keys without an index suffix (`hostname`, `mapname`, …), later duplicates win. */
  info: Record<string, string>;
  /** Records from `<field>_<N>` keys except teamname_N, sorted by N (indices may be sparse). */
  players: Gamespy1Record[];
  /** `teamname_N` (BF1942), sorted by N. */
  teams: Array<{ index: number; name: string }>;
}

const INDEXED_KEY = /^(.+)_(\d{1,6})$/;

/** Group a reply's pairs into server keys, player records and team records. */
export function groupGamespy1Pairs(pairs: readonly KeyValue[]): Gamespy1Grouped {
  const info: Record<string, string> = {};
  const players = new Map<number, Record<string, string>>();
  const teams = new Map<number, string>();
  for (const { key, value } of pairs) {
    const match = INDEXED_KEY.exec(key);
    if (match === null) {
      info[key] = value;
      continue;
    }
    const field = match[1]!;
    const index = Number.parseInt(match[2]!, 10);
    if (field === "teamname") {
      teams.set(index, value);
      continue;
    }
    let record = players.get(index);
    if (record === undefined) {
      record = {};
      players.set(index, record);
    }
    record[field] = value;
  }
  return {
    info,
    players: [...players.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, fields]) => ({ index, fields })),
    teams: [...teams.entries()].sort(([a], [b]) => a - b).map(([index, name]) => ({ index, name })),
  };
}

/**
 * Server side: split key/values into datagrams of at most `maxDatagramBytes` (UE1 style, pairs
 * never cut), numbering them `\queryid\Q.N` and putting `\final\` before the last queryid.
 */
export function encodeGamespy1Response(
  pairs: readonly KeyValue[],
  options: {
    queryId: number;
    maxDatagramBytes?: number;
    encoding?: TextEncoding;
    finalAfterQueryId?: boolean;
  },
): Buffer[] {
  const encoding = options.encoding ?? "latin1";
  const max = options.maxDatagramBytes ?? 1400;
  const reserve = 48; // room for \final\\queryid\Q.N
  const chunks: Buffer[][] = [[]];
  let size = 0;
  for (const { key, value } of pairs) {
    if (key.includes("\\") || value.includes("\\")) {
      throw new ProtocolError(
        "INVALID_ARGUMENT",
        `GameSpy v1 keys and values cannot contain a backslash (${key})`,
      );
    }
    const pair = encodeText(`\\${key}\\${value}`, encoding);
    if (size > 0 && size + pair.length + reserve > max) {
      chunks.push([]);
      size = 0;
    }
    chunks[chunks.length - 1]!.push(pair);
    size += pair.length;
  }
  return chunks.map((chunk, i) => {
    const isLast = i === chunks.length - 1;
    const queryId = Buffer.from(`\\queryid\\${options.queryId}.${i + 1}`, "latin1");
    const final = Buffer.from(isLast ? "\\final\\" : "", "latin1");
    return options.finalAfterQueryId === true
      ? Buffer.concat([...chunk, queryId, final])
      : Buffer.concat([...chunk, final, queryId]);
  });
}
