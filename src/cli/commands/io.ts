/** Where a command writes: the process streams in production, buffers in in-process tests. */
export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export const processIo: CommandIo = process;

/** "host:port", "[v6]:port" or "host" (then `defaultPort`). */
export function parseHostPort(text: string, defaultPort: number): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  let host: string;
  let portText: string | undefined;
  if (bracketed) {
    host = bracketed[1] ?? "";
    portText = bracketed[2];
  } else if ((text.match(/:/g) ?? []).length === 1) {
    [host = "", portText] = text.split(":");
  } else {
    host = text; // a bare name, IPv4, or an unbracketed IPv6 literal
  }
  const port = portText === undefined ? defaultPort : Number(portText);
  if (host === "" || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`invalid address ${JSON.stringify(text)} (want HOST[:PORT])`);
  return { host, port };
}
