/**
 * `gsindex decode [--app-id N]`: decodes captured A2S responses. Each input line is one response:
 * its UDP payloads in hex (headers FFFFFFFF / FEFFFFFF included), separated by spaces, in arrival
 * order. Each line gets one JSON line back: {"kind":...,"value":...} or {"error":{code,message,offset}}.
 * `run` takes its streams as a parameter so tests drive it without a child process.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import {
  LEGACY_CLI_PROTOCOLS,
  extractProtocol,
  isLegacyCliProtocol,
  runLegacyDecode,
} from "./legacy-query";
import { decodeDatagrams, isProtocolError, ProtocolError } from "../../protocol";
import { defineCommand } from "../define-command";

export interface DecodeIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

const HELP = `usage: gsindex decode [--app-id N]

Reads standard input, one response per line: the response's UDP payloads in hex (with their
FFFFFFFF or FEFFFFFF headers), separated by spaces, in arrival order. Split fragments may come in
any order; they are reassembled (bzip2 included). Blank lines and lines starting with # are skipped.

Prints one JSON line per response:
  {"kind":"info|players|rules|challenge|ping","value":{...}}
  {"error":{"code":"TRUNCATED|MALFORMED|...","message":"...","offset":N|null}}

Truncated lists: a PLAYER or RULES reply that ends before the entries its count announces (or
mid-entry) is NOT an error: the value holds the complete entries and "truncated":true.
Values: players {"count","players":[{index,name,score,duration,deaths?,money?}],"truncated"?},
rules {"count","rules":[{name,value,nameHex?,valueHex?}],"truncated"?}; strings that are not
valid UTF-8 carry their exact bytes in a *Hex field; 64-bit ids are decimal strings.

options:
  --app-id N   the app id a client knows from A2S_INFO (2400 = The Ship's player layout)
  --protocol P source (default) or an older protocol (${LEGACY_CLI_PROTOCOLS.join("|")}):
               prints the normalised result with its raw key/values (gsindex decode --protocol quake3 --help)
  -h, --help   this text

Exit status: 0 when every line decoded, 1 when any line printed an error, 2 on bad usage.`;

const command = defineCommand({
  name: "decode",
  usage: HELP,
  options: { "app-id": { type: "string" } },
});

function parseHexLine(line: string): Buffer[] {
  return line
    .trim()
    .split(/\s+/)
    .map((token, index) => {
      if (!/^(?:[0-9a-fA-F]{2})*$/.test(token)) {
        throw new ProtocolError(
          "INVALID_ARGUMENT",
          `datagram ${index + 1} is not an even-length hex string`,
        );
      }
      return Buffer.from(token, "hex");
    });
}

function errorLine(err: unknown): string {
  const error = isProtocolError(err)
    ? { code: err.code, message: err.message, offset: err.offset ?? null }
    : { code: "INTERNAL", message: err instanceof Error ? err.message : String(err), offset: null };
  return JSON.stringify({ error });
}

function parseAppId(raw: string | undefined): number | undefined | null {
  if (raw === undefined) return undefined;
  return /^[0-9]{1,10}$/.test(raw) && Number(raw) <= 0xffffffff ? Number(raw) : null;
}

export async function run(
  argv: string[],
  io: DecodeIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  // --protocol: the older protocols are decoded by legacy-query.ts; 'source' is this command.
  const selected = extractProtocol(argv);
  if (selected.protocol !== null) {
    if (isLegacyCliProtocol(selected.protocol))
      return runLegacyDecode(selected.protocol, selected.rest, io);
    if (selected.protocol !== "source") {
      io.stderr.write(`gsindex decode: unknown protocol '${selected.protocol}'\n`);
      return 2;
    }
    argv = selected.rest;
  }
  const parsed = command.parse(argv, io);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  const appId = parseAppId(values["app-id"]);
  if (appId === null) {
    io.stderr.write(
      `gsindex decode: --app-id must be a non-negative integer, got ${JSON.stringify(values["app-id"])}\n`,
    );
    return 2;
  }
  const context = appId === undefined ? {} : { appId };
  let failed = false;
  const lines = createInterface({ input: io.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    let out: string;
    try {
      out = JSON.stringify(decodeDatagrams(parseHexLine(line), context));
    } catch (err) {
      failed = true;
      out = errorLine(err);
    }
    io.stdout.write(out + "\n");
  }
  return failed ? 1 : 0;
}
