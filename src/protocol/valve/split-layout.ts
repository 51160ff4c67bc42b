/**
 * Which split layout a response uses, read from the bytes of its fragment 0 (never from an app id:
 * compressed replies from app id 0 have no size field, gameq-ffe-*-rules-split).
 * Spec: Valve's "Server Queries" page (both layouts); docs/protocols.md "Split responses".
 *
 * | layout            | after FE FF FF FF + id (u32)                          | data of fragment 0 starts |
 * |-------------------|-------------------------------------------------------|---------------------------|
 * | goldsrc           | u8: number << 4 | total (total 2..15)                 | 9:  FF FF FF FF           |
 * | source, size      | total u8, number u8, max size u16                     | 12: FF FF FF FF           |
 * | source, no size   | total u8, number u8                                   | 10: FF FF FF FF           |
 * | compressed (id bit 31) | as source; fragment 0 adds decompressed size i32, CRC32 u32 | 20 / 18: "BZh" |
 */

export interface SplitLayout {
  format: "source" | "goldsrc";
  total: number;
  /** Header bytes before the data of every fragment (FE FF FF FF and the id included). */
  headerBytes: number;
  /** Source only: bzip2-compressed; fragment 0 holds size and CRC32 after its header. */
  compressed: boolean;
}

const BZIP2_MAGIC = Buffer.from("BZh", "latin1");
const isMinusOne = (d: Buffer, at: number): boolean =>
  d.length >= at + 4 && d.readInt32LE(at) === -1;
const hasMagic = (d: Buffer, at: number): boolean =>
  d.length >= at + 3 && d.subarray(at, at + 3).equals(BZIP2_MAGIC);

/** GoldSrc fragment 0: high nibble 0, total 2..15, and the inner FF FF FF FF right after. Unambiguous:
 *  a Source fragment would need packet number 0xFF there, which no total (a byte) allows. */
export function goldSrcFirstLayout(d: Buffer): SplitLayout | null {
  const byte = d[8];
  if (byte === undefined || byte >> 4 !== 0 || (byte & 0x0f) < 2 || !isMinusOne(d, 9)) return null;
  return { format: "goldsrc", total: byte & 0x0f, headerBytes: 9, compressed: false };
}

/** Source fragment 0 (number byte 0), with its size field detected from where the data starts. */
export function sourceFirstLayout(d: Buffer, id: number): SplitLayout | null {
  const total = d[8];
  if (total === undefined || total === 0 || d[9] !== 0) return null;
  if ((id & 0x80000000) !== 0) {
    if (hasMagic(d, 18)) return { format: "source", total, headerBytes: 10, compressed: true };
    if (hasMagic(d, 20)) return { format: "source", total, headerBytes: 12, compressed: true };
    return null;
  }
  // Both match only when bytes 10..15 are all FF: a size field of 0xFFFF is possible, a type byte of 0xFF is not.
  if (isMinusOne(d, 12)) return { format: "source", total, headerBytes: 12, compressed: false };
  if (isMinusOne(d, 10)) return { format: "source", total, headerBytes: 10, compressed: false };
  return null;
}

/**
 * True when a Source fragment-0 header could also be a later GoldSrc fragment (byte 8 read as
 * number << 4 | total with 1 <= number < total): only Source totals of 18 and more.
 */
export function couldBeGoldSrcLater(d: Buffer): boolean {
  const byte = d[8] ?? 0;
  return byte >> 4 >= 1 && byte >> 4 < (byte & 0x0f);
}
