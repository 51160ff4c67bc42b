/**
 * Byte-level text helpers shared by the backslash and line-oriented legacy protocols.
 *
 * Spec: docs/protocols-legacy.md "Decisions" (byte-faithful text). Every split happens on delimiter BYTES (00, 5C, 0A)
 * before any decoding, so a multi-byte UTF-8 sequence can never be cut in half; decoding is byte-faithful
 * latin1 unless the caller asks for UTF-8 (MTA, Minecraft, JC2MP send UTF-8).
 */
export type TextEncoding = "latin1" | "utf8";

/** Options every legacy decoder takes. */
export interface LegacyDecodeOptions {
  /** How text bytes become strings. @defaultValue 'latin1' (byte-faithful, fully reversible) */
  encoding?: TextEncoding;
}

export const BACKSLASH = 0x5c;
export const NEWLINE = 0x0a;

export function decodeText(bytes: Buffer, encoding: TextEncoding = "latin1"): string {
  return bytes.toString(encoding);
}

export function encodeText(text: string, encoding: TextEncoding = "latin1"): Buffer {
  return Buffer.from(text, encoding);
}

/** Split on every occurrence of one byte (like String.split, so n delimiters give n+1 parts). */
export function splitBytes(buffer: Buffer, delimiter: number): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (;;) {
    const end = buffer.indexOf(delimiter, start);
    if (end < 0) break;
    parts.push(buffer.subarray(start, end));
    start = end + 1;
  }
  parts.push(buffer.subarray(start));
  return parts;
}

/** One key/value pair in wire order; duplicates are kept here and resolved by whoever builds a map. */
export interface KeyValue {
  key: string;
  value: string;
}

/**
 * A `\key\value\key\value` infostring (Quake 2/3, GameSpy 1, Half-Life infostring). One leading
 * `\` is optional; a trailing `\` is tolerated; a final key without a value gets ''.
 */
export function parseInfostring(bytes: Buffer, encoding: TextEncoding = "latin1"): KeyValue[] {
  let body = bytes;
  if (body[0] === BACKSLASH) body = body.subarray(1);
  if (body.length === 0) return [];
  const parts = splitBytes(body, BACKSLASH);
  // "\a\1\" ends with an empty element that is not a key: drop it so pairs stay aligned.
  if (parts.length % 2 === 1 && parts.length > 1 && parts[parts.length - 1]!.length === 0)
    parts.pop();
  const pairs: KeyValue[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    pairs.push({
      key: decodeText(parts[i]!, encoding),
      value: decodeText(parts[i + 1] ?? Buffer.alloc(0), encoding),
    });
  }
  return pairs;
}

/** Later duplicates overwrite earlier ones (BF1942 and others repeat keys with identical values). */
export function toRecord(pairs: readonly KeyValue[]): Record<string, string> {
  const record: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const { key, value } of pairs) record[key] = value;
  return { ...record };
}

export function encodeInfostring(
  pairs: readonly KeyValue[],
  encoding: TextEncoding = "latin1",
): Buffer {
  return encodeText(pairs.map(({ key, value }) => `\\${key}\\${value}`).join(""), encoding);
}

/** A case-insensitive lookup: legacy key case is not stable across games (GameSpy v1, Doom 3). */
export function lookupKey(
  record: Readonly<Record<string, string>>,
  ...names: string[]
): string | undefined {
  for (const name of names) {
    const exact = record[name];
    if (exact !== undefined) return exact;
  }
  const lowered = new Set(names.map((n) => n.toLowerCase()));
  for (const [key, value] of Object.entries(record)) {
    if (lowered.has(key.toLowerCase())) return value;
  }
  return undefined;
}

/** A decimal integer, or null when the text is not one (legacy values may be blank, "45s", "100%"). */
export function parseIntOrNull(text: string | undefined): number | null {
  if (text === undefined) return null;
  const trimmed = text.trim();
  if (!/^[-+]?\d+$/.test(trimmed)) return null;
  const n = Number.parseInt(trimmed, 10);
  return Number.isSafeInteger(n) ? n : null;
}

/** '1', 'true', 'True', 'yes' → true; '0', 'false', 'False', 'no', '' → false; anything else null. */
export function parseBoolOrNull(text: string | undefined): boolean | null {
  if (text === undefined) return null;
  const t = text.trim().toLowerCase();
  if (t === "1" || t === "true" || t === "yes" || t === "on") return true;
  if (t === "0" || t === "false" || t === "no" || t === "off" || t === "") return false;
  return null;
}
