/**
 * A small pure-JS bzip2 compressor, so the simulator can send compressed split responses without
 * spawning the `bzip2` program per reply (and on machines that lack it). Servers compress; clients
 * only decompress (seek-bzip). Favours simplicity over ratio: blocks of at most ~99 kB ("BZh1"), one
 * Huffman table (written twice: the format needs at least two), no randomisation.
 *
 * Format (per block): magic 0x314159265359, CRC of the block's input, 0 (not randomised), BWT
 * origin pointer (24 bits), used-byte bitmap, table count, selectors (unary MTF), code lengths
 * (delta coded), then the MTF/RLE2 symbols Huffman-coded. Stream: "BZh1", blocks, 0x177245385090,
 * combined CRC. Reference: the bzip2 1.0 format as read by seek-bzip (and libbzip2).
 */

const BLOCK_MAGIC_HIGH = 0x314159;
const BLOCK_MAGIC_LOW = 0x265359;
const END_MAGIC_HIGH = 0x177245;
const END_MAGIC_LOW = 0x385090;
/** RLE1 output bytes per block: under the 100,000 a "BZh1" decoder allows. */
const MAX_BLOCK_BYTES = 99_000;
const MAX_CODE_BITS = 17;
const SYMBOLS_PER_GROUP = 50;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    table[i] = c >>> 0;
  }
  return table;
})();

/** bzip2's CRC: CRC-32 MSB-first (not zlib's reflected one). */
function blockCrc(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data)
    crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ byte) & 0xff] ?? 0)) >>> 0;
  return ~crc >>> 0;
}

class BitWriter {
  private bytes: number[] = [];
  private current = 0;
  private count = 0;

  write(bits: number, value: number): void {
    for (let i = bits - 1; i >= 0; i--) {
      this.current = (this.current << 1) | ((value >>> i) & 1);
      if (++this.count === 8) {
        this.bytes.push(this.current);
        this.current = 0;
        this.count = 0;
      }
    }
  }

  finish(): Buffer {
    if (this.count > 0) this.bytes.push(this.current << (8 - this.count));
    return Buffer.from(this.bytes);
  }
}

/** Splits the input into blocks of RLE1-coded bytes (runs of 4..255 equal bytes: 4 bytes + count). */
function rle1Blocks(input: Buffer): Array<{ source: Buffer; rle: Uint8Array }> {
  const blocks: Array<{ source: Buffer; rle: Uint8Array }> = [];
  let rle: number[] = [];
  let blockStart = 0;
  let i = 0;
  while (i < input.length) {
    const byte = input[i] ?? 0;
    let run = 1;
    while (run < 255 && input[i + run] === byte) run++;
    const encodedBytes = run >= 4 ? 5 : run;
    if (rle.length + encodedBytes > MAX_BLOCK_BYTES) {
      blocks.push({ source: input.subarray(blockStart, i), rle: Uint8Array.from(rle) });
      rle = [];
      blockStart = i;
    }
    if (run >= 4) rle.push(byte, byte, byte, byte, run - 4);
    else for (let k = 0; k < run; k++) rle.push(byte);
    i += run;
  }
  if (rle.length > 0)
    blocks.push({ source: input.subarray(blockStart), rle: Uint8Array.from(rle) });
  return blocks;
}

/**
 * Burrows-Wheeler transform: sorts the cyclic rotations by prefix doubling with counting sorts
 * (O(n log n) on typed arrays; a comparison sort was 10x slower on simulator-sized replies).
 */
function bwt(block: Uint8Array): { last: Uint8Array; origPtr: number } {
  const n = block.length;
  let order = new Int32Array(n);
  let rank = new Int32Array(n);
  const counts = new Int32Array(Math.max(256, n));
  for (const byte of block) counts[byte] = (counts[byte] ?? 0) + 1;
  for (let b = 1; b < 256; b++) counts[b] = (counts[b] ?? 0) + (counts[b - 1] ?? 0);
  for (let i = n - 1; i >= 0; i--) {
    const byte = block[i] ?? 0;
    counts[byte] = (counts[byte] ?? 0) - 1;
    order[counts[byte] ?? 0] = i;
  }
  let classes = 1;
  for (let j = 1; j < n; j++) {
    if (block[order[j] ?? 0] !== block[order[j - 1] ?? 0]) classes++;
    rank[order[j] ?? 0] = classes - 1;
  }
  const shifted = new Int32Array(n);
  const nextRank = new Int32Array(n);
  for (let k = 1; k < n && classes < n; k <<= 1) {
    // Sorted by the second half already: shift the current order back by k, then sort stably by the first half.
    for (let j = 0; j < n; j++) shifted[j] = ((order[j] ?? 0) - k + n) % n;
    counts.fill(0, 0, classes);
    for (let j = 0; j < n; j++) counts[rank[shifted[j] ?? 0] ?? 0]! += 1;
    for (let c = 1; c < classes; c++) counts[c] = (counts[c] ?? 0) + (counts[c - 1] ?? 0);
    const sorted = new Int32Array(n);
    for (let j = n - 1; j >= 0; j--) {
      const start = shifted[j] ?? 0;
      const c = rank[start] ?? 0;
      counts[c] = (counts[c] ?? 0) - 1;
      sorted[counts[c] ?? 0] = start;
    }
    order = sorted;
    classes = 1;
    nextRank[order[0] ?? 0] = 0;
    for (let j = 1; j < n; j++) {
      const a = order[j] ?? 0;
      const b = order[j - 1] ?? 0;
      if (rank[a] !== rank[b] || rank[(a + k) % n] !== rank[(b + k) % n]) classes++;
      nextRank[a] = classes - 1;
    }
    rank = Int32Array.from(nextRank);
  }
  const last = new Uint8Array(n);
  let origPtr = 0;
  for (let j = 0; j < n; j++) {
    const start = order[j] ?? 0;
    last[j] = block[(start + n - 1) % n] ?? 0;
    if (start === 0) origPtr = j;
  }
  return { last, origPtr };
}

/** Move-to-front over the used bytes, zero runs as RUNA/RUNB, others as position + 1, then EOB. */
function mtfRle2(last: Uint8Array, used: number[]): number[] {
  const list = used.map((_, i) => i);
  const indexOf = new Map(used.map((byte, i) => [byte, i]));
  const symbols: number[] = [];
  let zeros = 0;
  const flushZeros = (): void => {
    if (zeros === 0) return;
    let pending = zeros - 1;
    for (;;) {
      symbols.push(pending & 1 ? 1 : 0);
      if (pending < 2) break;
      pending = (pending - 2) >> 1;
    }
    zeros = 0;
  };
  for (const byte of last) {
    const seq = indexOf.get(byte) ?? 0;
    const position = list.indexOf(seq);
    if (position === 0) {
      zeros++;
      continue;
    }
    flushZeros();
    list.splice(position, 1);
    list.unshift(seq);
    symbols.push(position + 1);
  }
  flushZeros();
  symbols.push(used.length + 1);
  return symbols;
}

/** Huffman code lengths, every symbol at least 1 bit, at most MAX_CODE_BITS (frequencies are flattened until they fit). */
function codeLengths(frequencies: number[]): number[] {
  let weights = frequencies.map((f) => Math.max(f, 1));
  for (;;) {
    const lengths = new Array<number>(weights.length).fill(0);
    let nodes: Array<{ weight: number; symbols: number[] }> = weights.map((weight, symbol) => ({
      weight,
      symbols: [symbol],
    }));
    while (nodes.length > 1) {
      nodes.sort((a, b) => a.weight - b.weight);
      const [a, b] = nodes as [
        { weight: number; symbols: number[] },
        { weight: number; symbols: number[] },
      ];
      for (const s of [...a.symbols, ...b.symbols]) lengths[s] = (lengths[s] ?? 0) + 1;
      nodes = [
        { weight: a.weight + b.weight, symbols: [...a.symbols, ...b.symbols] },
        ...nodes.slice(2),
      ];
    }
    if (Math.max(...lengths) <= MAX_CODE_BITS) return lengths.map((l) => Math.max(l, 1));
    weights = weights.map((w) => 1 + (w >> 1));
  }
}

/** Canonical codes as bzip2 assigns them: by length, then by symbol. */
function assignCodes(lengths: number[]): number[] {
  const codes = new Array<number>(lengths.length).fill(0);
  let code = 0;
  for (let length = 1; length <= MAX_CODE_BITS; length++) {
    lengths.forEach((l, symbol) => {
      if (l === length) codes[symbol] = code++;
    });
    code <<= 1;
  }
  return codes;
}

function writeBlock(out: BitWriter, source: Buffer, rle: Uint8Array): number {
  const crc = blockCrc(source);
  const { last, origPtr } = bwt(rle);
  const used: number[] = [];
  const present = new Uint8Array(256);
  for (const byte of rle) present[byte] = 1;
  present.forEach((p, byte) => {
    if (p) used.push(byte);
  });
  const symbols = mtfRle2(last, used);
  const alphabetSize = used.length + 2;
  const frequencies = new Array<number>(alphabetSize).fill(0);
  for (const s of symbols) frequencies[s] = (frequencies[s] ?? 0) + 1;
  const lengths = codeLengths(frequencies);
  const codes = assignCodes(lengths);

  out.write(24, BLOCK_MAGIC_HIGH);
  out.write(24, BLOCK_MAGIC_LOW);
  out.write(32, crc);
  out.write(1, 0);
  out.write(24, origPtr);
  let ranges = 0;
  for (let r = 0; r < 16; r++)
    if (present.subarray(r * 16, r * 16 + 16).some((p) => p)) ranges |= 1 << (15 - r);
  out.write(16, ranges);
  for (let r = 0; r < 16; r++) {
    if (!(ranges & (1 << (15 - r)))) continue;
    let bits = 0;
    for (let j = 0; j < 16; j++) if (present[r * 16 + j]) bits |= 1 << (15 - j);
    out.write(16, bits);
  }
  const selectors = Math.ceil(symbols.length / SYMBOLS_PER_GROUP);
  out.write(3, 2);
  out.write(15, selectors);
  for (let s = 0; s < selectors; s++) out.write(1, 0);
  for (let table = 0; table < 2; table++) {
    let current = lengths[0] ?? 1;
    out.write(5, current);
    for (const length of lengths) {
      while (current !== length) {
        out.write(2, current < length ? 0b10 : 0b11);
        current += current < length ? 1 : -1;
      }
      out.write(1, 0);
    }
  }
  for (const s of symbols) out.write(lengths[s] ?? 0, codes[s] ?? 0);
  return crc;
}

/** Compresses `input` into a complete bzip2 stream. */
export function compressBzip2(input: Buffer): Buffer {
  const out = new BitWriter();
  out.write(8, 0x42); // B
  out.write(8, 0x5a); // Z
  out.write(8, 0x68); // h
  out.write(8, 0x31); // 1: 100 kB blocks, so decoders allocate little
  let combined = 0;
  for (const { source, rle } of rle1Blocks(input)) {
    const crc = writeBlock(out, source, rle);
    combined = (((combined << 1) | (combined >>> 31)) ^ crc) >>> 0;
  }
  out.write(24, END_MAGIC_HIGH);
  out.write(24, END_MAGIC_LOW);
  out.write(32, combined);
  return out.finish();
}
