declare module "seek-bzip" {
  /** An output sink seek-bzip writes decoded bytes to one at a time (used to cap the output size). */
  export interface ByteSink {
    writeByte(byte: number): void;
  }
  /** An input source; readByte past the end may throw (seek-bzip itself would read undefined as 0). */
  export interface ByteSource {
    readByte(): number;
    read(buffer: Buffer, offset: number, length: number): number;
    seek(position: number): void;
    eof(): boolean;
  }
  export function decode(
    input: Buffer | ByteSource,
    output?: Buffer | number | ByteSink,
  ): Buffer | undefined;
  /**
   * The decoder behind decode() (the module's default export), for callers that drive its block loop
   * themselves as decode() does (seek-bzip 2.0.0 lib/index.js, Bunzip.decode).
   */
  export default class Bunzip {
    constructor(input: ByteSource, output: ByteSink);
    /** Words of the per-block buffer _init_block allocates: 100,000 x the stream's level digit. */
    dbufSize: number;
    /** The combined CRC of the blocks read so far. */
    streamCRC: number;
    reader: { read(bits: number): number };
    /** Reads the next block; false at the end-of-stream marker. */
    _init_block(): boolean;
    /** Writes the block read by _init_block to the output and checks its CRC. */
    _read_bunzip(): number;
  }
}
