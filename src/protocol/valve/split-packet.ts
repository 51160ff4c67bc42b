/**
 * Reassembles split A2S responses (FE FF FF FF + id + fragment header + data). Layouts are in
 * split-layout.ts. Fragments may arrive out of order, duplicated, or interleaved with fragments of
 * other ids; each id is assembled apart. Caps: fragment count (15 GoldSrc by its nibble, 255 Source,
 * lower on request), raw bytes per id, decompressed size, and the number of half-assembled ids.
 *
 * Fragments are kept raw until fragment 0 arrives, because only fragment 0 tells the layout
 * (GoldSrc or Source, with or without the size field).
 */
import { ProtocolError } from "../errors";
import {
  MAX_DECOMPRESSED_BYTES,
  MAX_GOLDSRC_FRAGMENTS,
  MAX_PENDING_SPLIT_IDS,
  MAX_SOURCE_FRAGMENTS,
  MAX_SPLIT_RESPONSE_BYTES,
} from "../defaults";
import { decompressBzip2 } from "../wire/decompress";
import { SINGLE_PACKET_HEADER, SPLIT_PACKET_HEADER } from "./constants";
import {
  couldBeGoldSrcLater,
  goldSrcFirstLayout,
  sourceFirstLayout,
  type SplitLayout,
} from "./split-layout";

/** Caps of one SplitAssembler; defaults in defaults.ts. */
export interface SplitAssemblerOptions {
  /** @defaultValue MAX_PENDING_SPLIT_IDS (8) */
  maxPendingIds?: number;
  /** @defaultValue MAX_DECOMPRESSED_BYTES (1 MiB) */
  maxDecompressedBytes?: number;
  /** @defaultValue MAX_SPLIT_RESPONSE_BYTES (1 MiB) */
  maxResponseBytes?: number;
  /** Fragment cap for the Source layout. @defaultValue MAX_SOURCE_FRAGMENTS (255) */
  maxSourceFragments?: number;
  /** Fragment cap for the GoldSrc layout. @defaultValue MAX_GOLDSRC_FRAGMENTS (15) */
  maxGoldSrcFragments?: number;
}

interface Pending {
  raw: Buffer[];
  bytes: number;
}

const RECENT_IDS_KEPT = 16;

/** Reassembles split responses from ONE remote (one assembler per server or per query). */
export class SplitAssembler {
  private readonly pending = new Map<number, Pending>();
  /** Ids completed lately: a late duplicate of one of their fragments is dropped, not re-assembled. */
  private readonly recent: number[] = [];
  private readonly options: Required<SplitAssemblerOptions>;

  constructor(options: SplitAssemblerOptions = {}) {
    this.options = {
      maxPendingIds: options.maxPendingIds ?? MAX_PENDING_SPLIT_IDS,
      maxDecompressedBytes: options.maxDecompressedBytes ?? MAX_DECOMPRESSED_BYTES,
      maxResponseBytes: options.maxResponseBytes ?? MAX_SPLIT_RESPONSE_BYTES,
      maxSourceFragments: Math.min(
        options.maxSourceFragments ?? MAX_SOURCE_FRAGMENTS,
        MAX_SOURCE_FRAGMENTS,
      ),
      maxGoldSrcFragments: Math.min(
        options.maxGoldSrcFragments ?? MAX_GOLDSRC_FRAGMENTS,
        MAX_GOLDSRC_FRAGMENTS,
      ),
    };
  }

  /**
   * Feeds one datagram. Returns the full single payload (starting FF FF FF FF) when one is
   * complete: a single-packet datagram at once, a split response when its last fragment arrives.
   * Returns null while fragments are missing. Throws ProtocolError on a malformed datagram; the id
   * it belonged to is then dropped.
   */
  push(datagram: Buffer): Buffer | null {
    if (datagram.length < 4)
      throw new ProtocolError(
        "TRUNCATED",
        `datagram of ${datagram.length} bytes has no 4-byte header`,
        { offset: 0 },
      );
    const header = datagram.readInt32LE(0);
    if (header === SINGLE_PACKET_HEADER) return datagram;
    if (header !== SPLIT_PACKET_HEADER)
      throw new ProtocolError(
        "MALFORMED",
        `datagram header 0x${(header >>> 0).toString(16)} is neither FFFFFFFF nor FEFFFFFF`,
        { offset: 0 },
      );
    if (datagram.length < 10)
      throw new ProtocolError(
        "TRUNCATED",
        `split fragment of ${datagram.length} bytes has no room for its header`,
        { offset: datagram.length },
      );
    const id = datagram.readUInt32LE(4);
    if (this.recent.includes(id)) return null;
    const entry = this.entryFor(id);
    if (entry.raw.some((seen) => seen.equals(datagram))) return null;
    entry.raw.push(datagram);
    entry.bytes += datagram.length;
    try {
      if (
        entry.raw.length > MAX_SOURCE_FRAGMENTS + 1 ||
        entry.bytes > this.options.maxResponseBytes
      ) {
        throw new ProtocolError(
          "SPLIT_LIMIT",
          `split response ${id} exceeds ${entry.raw.length} fragments / ${entry.bytes} bytes`,
        );
      }
      const payload = this.tryComplete(id, entry);
      if (payload !== null) this.finish(id);
      return payload;
    } catch (err) {
      this.pending.delete(id);
      throw err;
    }
  }

  /** Ids with fragments still missing, with how many fragments each holds (for error messages). */
  describePending(): string {
    return [...this.pending]
      .map(([id, p]) => `id 0x${id.toString(16)}: ${p.raw.length} fragment(s)`)
      .join(", ");
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  private entryFor(id: number): Pending {
    let entry = this.pending.get(id);
    if (entry === undefined) {
      if (this.pending.size >= this.options.maxPendingIds) {
        const oldest = this.pending.keys().next().value;
        if (oldest !== undefined) this.pending.delete(oldest);
      }
      entry = { raw: [], bytes: 0 };
      this.pending.set(id, entry);
    }
    return entry;
  }

  private finish(id: number): void {
    this.pending.delete(id);
    this.recent.push(id);
    if (this.recent.length > RECENT_IDS_KEPT) this.recent.shift();
  }

  private layoutOf(id: number, raw: Buffer[]): SplitLayout | null {
    for (const d of raw) {
      const layout = goldSrcFirstLayout(d);
      if (layout !== null) return layout;
    }
    for (const d of raw) {
      const layout = sourceFirstLayout(d, id);
      if (layout === null) continue;
      // Ambiguous with a later GoldSrc fragment: trust it only once every Source fragment is here.
      if (couldBeGoldSrcLater(d) && raw.filter((r) => r[8] === layout.total).length < layout.total)
        continue;
      return layout;
    }
    return null;
  }

  private tryComplete(id: number, entry: Pending): Buffer | null {
    const layout = this.layoutOf(id, entry.raw);
    if (layout === null) return null;
    const cap =
      layout.format === "goldsrc"
        ? this.options.maxGoldSrcFragments
        : this.options.maxSourceFragments;
    if (layout.total > cap)
      throw new ProtocolError(
        "SPLIT_LIMIT",
        `split response ${id} announces ${layout.total} fragments, more than the cap of ${cap}`,
        { offset: 8 },
      );
    const parts = new Map<number, Buffer>();
    for (const d of entry.raw) {
      const { total, number } = fragmentNumbers(d, layout);
      if (total !== layout.total || number >= total) {
        throw new ProtocolError(
          "MALFORMED",
          `split response ${id}: fragment ${number}/${total} does not fit fragment 0's total of ${layout.total}`,
          { offset: 8 },
        );
      }
      if (d.length < layout.headerBytes)
        throw new ProtocolError(
          "TRUNCATED",
          `split fragment ${number} is shorter than its header`,
          { offset: d.length },
        );
      if (!parts.has(number)) parts.set(number, d.subarray(layout.headerBytes));
    }
    if (parts.size < layout.total) return null;
    const ordered: Buffer[] = [];
    for (let n = 0; n < layout.total; n++) ordered.push(parts.get(n) ?? Buffer.alloc(0));
    const joined = Buffer.concat(ordered);
    return layout.compressed ? this.decompress(joined) : joined;
  }

  private decompress(joined: Buffer): Buffer {
    if (joined.length < 8)
      throw new ProtocolError("TRUNCATED", "compressed split response has no size and CRC32", {
        offset: joined.length,
      });
    return decompressBzip2(
      joined.subarray(8),
      joined.readInt32LE(0),
      joined.readUInt32LE(4),
      this.options.maxDecompressedBytes,
    );
  }
}

function fragmentNumbers(d: Buffer, layout: SplitLayout): { total: number; number: number } {
  const byte8 = d[8] ?? 0;
  if (layout.format === "goldsrc") return { total: byte8 & 0x0f, number: byte8 >> 4 };
  return { total: byte8, number: d[9] ?? 0 };
}
