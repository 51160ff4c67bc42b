declare module 'seek-bzip' {
  export function decode(input: Buffer, output?: Buffer): Buffer;
}
