/** Streams for a CLI command run in-process: what it writes to stdout / stderr, kept as text. */
export function capture(): {
  io: { stdout: { write(t: string): boolean }; stderr: { write(t: string): boolean } };
  out: () => string;
  err: () => string;
} {
  let out = "";
  let err = "";
  return {
    io: {
      stdout: { write: (t: string) => ((out += t), true) },
      stderr: { write: (t: string) => ((err += t), true) },
    },
    out: () => out,
    err: () => err,
  };
}
