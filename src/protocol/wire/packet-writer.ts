/** A small growable builder for request and response packets (encoders and the simulator use it). */
export class PacketWriter {
  private chunks: Buffer[] = [];
  private length = 0;

  private push(chunk: Buffer): this {
    this.chunks.push(chunk);
    this.length += chunk.length;
    return this;
  }

  u8(value: number): this {
    const b = Buffer.allocUnsafe(1);
    b.writeUInt8(value & 0xff);
    return this.push(b);
  }

  i8(value: number): this {
    const b = Buffer.allocUnsafe(1);
    b.writeInt8(value);
    return this.push(b);
  }

  u16le(value: number): this {
    const b = Buffer.allocUnsafe(2);
    b.writeUInt16LE(value);
    return this.push(b);
  }

  u16be(value: number): this {
    const b = Buffer.allocUnsafe(2);
    b.writeUInt16BE(value);
    return this.push(b);
  }

  i32le(value: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeInt32LE(value);
    return this.push(b);
  }

  u32le(value: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(value >>> 0);
    return this.push(b);
  }

  u64le(value: bigint): this {
    const b = Buffer.allocUnsafe(8);
    b.writeBigUInt64LE(value);
    return this.push(b);
  }

  f32le(value: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeFloatLE(value);
    return this.push(b);
  }

  bytes(value: Buffer | Uint8Array): this {
    return this.push(Buffer.from(value));
  }

  /** A NUL-terminated string; a Buffer is written byte for byte, a string as UTF-8 (or latin1 on request). */
  cstring(value: string | Buffer, encoding: "utf8" | "latin1" = "utf8"): this {
    this.push(typeof value === "string" ? Buffer.from(value, encoding) : value);
    return this.u8(0);
  }

  get size(): number {
    return this.length;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks, this.length);
  }
}
