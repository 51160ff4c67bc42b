/** Where a command writes: the process streams in production, buffers in in-process tests. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: CommandIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** Resolves on the first SIGINT or SIGTERM (a foreground command's Ctrl-C), then stops listening for both. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** "host:port", "[v6]:port" or "host" (then `defaultPort`). */
export function parseHostPort(text: string, defaultPort: number): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  let host: string;
  let portText: string | undefined;
  if (bracketed) {
    host = bracketed[1] ?? '';
    portText = bracketed[2];
  } else if ((text.match(/:/g) ?? []).length === 1) {
    [host = '', portText] = text.split(':');
  } else {
    host = text; // a bare name, IPv4, or an unbracketed IPv6 literal
  }
  const port = portText === undefined ? defaultPort : Number(portText);
  if (host === '' || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid address ${JSON.stringify(text)} (want HOST[:PORT])`);
  return { host, port };
}
