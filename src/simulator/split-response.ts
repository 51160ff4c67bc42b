/**
 * Splits a single payload into A2S split fragments, as a server does (the simulator speaks through
 * this). Layouts: src/protocol/valve/split-layout.ts. `maxPacketBytes` is the data bytes per fragment; in the Source
 * layout it is also the value of the 2-byte size field.
 */
import { crc32 } from "node:zlib";
import {
  MAX_GOLDSRC_FRAGMENTS,
  MAX_SOURCE_FRAGMENTS,
  ProtocolError,
  DEFAULT_GOLDSRC_SPLIT_BYTES,
  DEFAULT_SOURCE_SPLIT_BYTES,
  SPLIT_COMPRESSED_BIT,
  SPLIT_PACKET_HEADER,
  PacketWriter,
} from "../protocol";
import { compressBzip2 } from "./bzip2-compress";

/** How splitResponse cuts a payload. */
export interface SplitResponseOptions {
  format: "source" | "goldsrc";
  /** Response id; bit 31 is set (Source) or cleared by `compress`. */
  id: number;
  /** Data bytes per fragment. @defaultValue 1248 (Source), 1391 (GoldSrc) */
  maxPacketBytes?: number;
  /** Source only: bzip2-compress the payload first. @defaultValue false */
  compress?: boolean;
  /** Source only: write the 2-byte size field (most Source servers do). @defaultValue true */
  sizeField?: boolean;
}

const MIN_FRAGMENT_BYTES = 16;

function chunk(data: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) chunks.push(data.subarray(at, at + size));
  return chunks.length === 0 ? [Buffer.alloc(0)] : chunks;
}

/** Cuts a full single payload into split fragments in the requested layout (fragment 0 first). */
export function splitResponse(payload: Buffer, options: SplitResponseOptions): Buffer[] {
  if (options.format === "goldsrc") return splitGoldSrc(payload, options);
  const maxBytes = options.maxPacketBytes ?? DEFAULT_SOURCE_SPLIT_BYTES;
  // Fragment 0 must hold the whole inner header (or size, CRC32 and "BZh") for the layout to be detected.
  if (maxBytes < MIN_FRAGMENT_BYTES || maxBytes > 0xffff)
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      `maxPacketBytes must be ${MIN_FRAGMENT_BYTES}..65535, got ${maxBytes}`,
    );
  const compress = options.compress ?? false;
  const data = compress
    ? Buffer.concat([
        new PacketWriter().i32le(payload.length).u32le(crc32(payload)).toBuffer(),
        compressBzip2(payload),
      ])
    : payload;
  const chunks = chunk(data, maxBytes);
  if (chunks.length > MAX_SOURCE_FRAGMENTS)
    throw new ProtocolError(
      "SPLIT_LIMIT",
      `${payload.length} bytes need ${chunks.length} fragments, more than ${MAX_SOURCE_FRAGMENTS}`,
    );
  const id = compress
    ? (options.id | SPLIT_COMPRESSED_BIT) >>> 0
    : (options.id & ~SPLIT_COMPRESSED_BIT) >>> 0;
  return chunks.map((part, number) => {
    const w = new PacketWriter().i32le(SPLIT_PACKET_HEADER).u32le(id).u8(chunks.length).u8(number);
    if (options.sizeField ?? true) w.u16le(maxBytes);
    return w.bytes(part).toBuffer();
  });
}

/** GoldSrc needs 2..15 fragments (its nibble), so a payload that fits one fragment is still halved. */
function splitGoldSrc(payload: Buffer, options: SplitResponseOptions): Buffer[] {
  const maxBytes = options.maxPacketBytes ?? DEFAULT_GOLDSRC_SPLIT_BYTES;
  if (maxBytes < MIN_FRAGMENT_BYTES)
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      `maxPacketBytes must be at least ${MIN_FRAGMENT_BYTES}, got ${maxBytes}`,
    );
  if (payload.length <= 4)
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      "a GoldSrc split needs more than the 4 header bytes",
    );
  const chunks = chunk(payload, Math.min(maxBytes, Math.max(4, Math.ceil(payload.length / 2))));
  if (chunks.length > MAX_GOLDSRC_FRAGMENTS)
    throw new ProtocolError(
      "SPLIT_LIMIT",
      `${payload.length} bytes need ${chunks.length} GoldSrc fragments, more than ${MAX_GOLDSRC_FRAGMENTS}`,
    );
  return chunks.map((part, number) =>
    new PacketWriter()
      .i32le(SPLIT_PACKET_HEADER)
      .u32le(options.id >>> 0)
      .u8((number << 4) | chunks.length)
      .bytes(part)
      .toBuffer(),
  );
}
