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
}
