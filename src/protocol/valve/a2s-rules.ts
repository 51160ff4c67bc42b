/**
 * A2S_RULES request and reply (S2A_RULES, 0x45). Spec: Valve's "Server Queries" page; docs/protocols.md "A2S_RULES".
 *
 * Request: FF FF FF FF 56 challenge(4 bytes; FF FF FF FF asks for one).
 * Reply:
 * | field        | type    | notes                                                        |
 * |--------------|---------|--------------------------------------------------------------|
 * | header, type | i32, u8 | FF FF FF FF 45                                               |
 * | count        | u16     |                                                              |
 * | per rule: name cstring, value cstring (binary on DayZ/Arma: exact bytes kept as hex)    |
 *
 * Truncation policy (docs/protocols.md): servers that cut the reply instead of splitting it
 * (variant-gameq-conanexiles-1-rules-truncated-mid-string) yield the complete pairs and
 * `truncated: true`; so does a reply with fewer pairs than `count`.
 */
import { ProtocolError } from "../errors";
import type { PacketReader } from "../wire/packet-reader";
import { PacketWriter } from "../wire/packet-writer";
import { A2S_RULES, NO_CHALLENGE, S2A_RULES, SINGLE_PACKET_HEADER } from "./constants";
import {
  openSinglePacket,
  requestWithChallenge,
  startSinglePacket,
  writeText,
} from "./single-packet";

/** One rule (console variable) as the server sent it. */
export interface Rule {
  name: string;
  value: string;
  /** Exact bytes (hex) of `name`, present only when they are not valid UTF-8. */
  nameHex?: string;
  /** Exact bytes (hex) of `value`, present only when they are not valid UTF-8. */
  valueHex?: string;
}

/** A decoded A2S_RULES reply. */
export interface RulesResult {
  /** The count as sent. */
  count: number;
  /** In wire order, duplicates kept. */
  rules: Rule[];
  /** Set when the reply ended before all announced rules (see the truncation policy). */
  truncated?: true;
}

/** FF FF FF FF 56, before the challenge. */
const RULES_PREFIX = new PacketWriter().i32le(SINGLE_PACKET_HEADER).u8(A2S_RULES).toBuffer();

/** A2S_RULES request; without a challenge it sends FF FF FF FF, which asks the server for one. */
export function encodeRulesRequest(challenge: Buffer = NO_CHALLENGE): Buffer {
  return requestWithChallenge(RULES_PREFIX, challenge);
}

/** One pair, or null when the data ends inside it. */
function readRule(reader: PacketReader): Rule | null {
  try {
    const name = reader.cstringExact("rule name");
    const value = reader.cstringExact("rule value");
    const rule: Rule = { name: name.value, value: value.value };
    if (name.hex !== undefined) rule.nameHex = name.hex;
    if (value.hex !== undefined) rule.valueHex = value.hex;
    return rule;
  } catch (err) {
    if (err instanceof ProtocolError && err.code === "TRUNCATED") return null;
    throw err;
  }
}

/** The complete pairs of a reply, and whether the data ended inside one. */
interface Pairs {
  rules: Rule[];
  cutMidPair: boolean;
}

/**
 * The pairs of an all-ASCII reply, already split at its NULs: the same pairs as reading them one by
 * one (an odd string out, or bytes after the last NUL, is a pair cut mid-way).
 */
function pairsOfStrings(strings: string[], tail: string): Pairs {
  const pairs = strings.length >> 1;
  const rules: Rule[] = [];
  for (let i = 0; i < pairs; i++)
    rules.push({ name: strings[2 * i] as string, value: strings[2 * i + 1] as string });
  return { rules, cutMidPair: strings.length % 2 === 1 || tail !== "" };
}

function readPairs(reader: PacketReader): Pairs {
  const rules: Rule[] = [];
  while (!reader.atEnd) {
    const rule = readRule(reader);
    if (rule === null) return { rules, cutMidPair: true };
    rules.push(rule);
  }
  return { rules, cutMidPair: false };
}

/** Decodes an A2S_RULES reply from a full single payload. */
export function decodeRulesResponse(payload: Buffer): RulesResult {
  const { reader } = openSinglePacket(payload, [S2A_RULES], "A2S_RULES reply");
  const count = reader.u16le("rule count");
  const ascii = reader.cstringsAsciiToEnd();
  const { rules, cutMidPair } =
    ascii === null ? readPairs(reader) : pairsOfStrings(ascii.strings, ascii.tail);
  const truncated = cutMidPair || rules.length < count;
  return truncated ? { count, rules, truncated: true } : { count, rules };
}

/** Encodes an A2S_RULES reply; `count` is written as given, strings with a hex form byte for byte. */
export function encodeRulesResponse(result: RulesResult): Buffer {
  const w = startSinglePacket(S2A_RULES).u16le(result.count & 0xffff);
  for (const rule of result.rules) {
    writeText(w, rule.name, rule.nameHex);
    writeText(w, rule.value, rule.valueHex);
  }
  return w.toBuffer();
}
